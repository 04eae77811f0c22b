package reliability

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDirectoryFlagsNamingAFile (issue 17, bad flags are usage): a run
// verb whose --root or --home names a regular file exits 64 naming the
// flag and the path, before anything is attempted (was 70 from the first
// mkdir beneath it); the session admin verb exits 2 (its usage code).
func TestDirectoryFlagsNamingAFile(t *testing.T) {
	e := newEnv(t)
	file := filepath.Join(e.dir, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"claim", "run", "k", "--root", file}, 64},
		{[]string{"reserve", "run", "k", "--home", file}, 64},
		{[]string{"session", "run", testSID, "--epoch", "6", "--root", file}, 64},
		{[]string{"session", "maintain", testSID, "--root", file}, 64},
		{[]string{"session", "owners", testSID, "--root", file}, 2},
	} {
		args := c.args
		if c.code == 64 {
			args = append(append(args, "--"), e.childArgv()...)
		}
		r := e.lw(e.childEnv("ran", 0, 0), args...)
		t.Logf("RESULT %s %s | exit %d | %s", c.args[0], c.args[1], r.code, firstLine(r.err))
		if r.code != c.code || !strings.Contains(r.err, file) || !strings.Contains(r.err, "not a directory") {
			t.Errorf("%v: want %d naming %s as not a directory, have %v", c.args[:2], c.code, file, r)
		}
	}
	if readWitness(t, e.witness)["ran"] != nil {
		t.Fatal("a command ran")
	}
}
