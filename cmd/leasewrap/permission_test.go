package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLockFileLeasewrapMayNotOpen: a lock file in a directory the user
// cannot write, or one the user cannot read, is refused before anything
// runs with 70 (an I/O error, docs/USAGE.md), and the message names the
// file, the directory or file that refused and what to do, not a bare
// "permission denied". As root every directory is writable, so leasewrap
// runs as nobody (65534) there; any other user is refused by the modes.
func TestLockFileLeasewrapMayNotOpen(t *testing.T) {
	root := os.Geteuid() == 0
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} { // t.TempDir's are 0700
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(base, "leasewrap.test")
	copyExecutable(t, os.Args[0], bin)
	dir := filepath.Join(base, "locks")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	unreadable := filepath.Join(dir, "unreadable.lock")
	if err := os.WriteFile(unreadable, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !root {
		for p, mode := range map[string]os.FileMode{unreadable: 0, dir: 0o555} {
			if err := os.Chmod(p, mode); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
	}
	missing := filepath.Join(dir, "job.lock")
	for _, tc := range []struct {
		path string
		want []string
	}{
		{missing, []string{
			"create lock file " + missing + ": permission denied; directory " + dir + " (owner uid ",
			") is not writable by uid ",
			"choose a path in a directory this user can write, or create " + missing + " first with this user as its owner",
		}},
		{unreadable, []string{
			"open lock file " + unreadable + ": permission denied; " + unreadable + " (owner uid ",
			"may not be opened by uid ",
			"give this user read access to it, or choose another path",
		}},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			cmd := exec.Command(bin, "flock", "run", tc.path, "--", "true")
			cmd.Env = append(os.Environ(), asMainEnv+"=1", "LEASEWRAP_LOG_FORMAT=text")
			if root {
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			}
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 70 {
				t.Fatalf("want exit 70, have %v; output:\n%s", err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("want %q in the message, have:\n%s", w, out)
				}
			}
			if _, err := os.Stat(missing); err == nil {
				t.Errorf("want no lock file created, have %s", missing)
			}
		})
	}
}

// copyExecutable copies the executable from to to, readable and
// executable by everyone.
func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
