package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/cli"
)

// deadPID is the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestSuspectClaimSaysWhenItEndsAndHowToFreeIt: a claim whose holder's pid
// is gone but whose TTL runs on is refused with the time its TTL ends, how
// long from now, and a command that frees it now; that command, run as
// printed, does.
func TestSuspectClaimSaysWhenItEndsAndHowToFreeIt(t *testing.T) {
	root, env := claimEnv(t)
	root = filepath.Join(root, "with space") // the printed command must quote it
	if err := os.MkdirAll(filepath.Join(root, ".fno", "claims"), 0o755); err != nil {
		t.Fatal(err)
	}
	expires := time.Now().Add(10 * time.Minute).UnixMilli()
	rec := fmt.Sprintf("schema_version: 1\nkey: job\nholder: gone-holder\nacquired_at: %d\npid: %d\nhost: %s\nexpires_at: %d\n",
		time.Now().UnixMilli(), deadPID(t), mustHostname(), expires)
	if err := os.WriteFile(claimFile(root, "job"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(root, "ran")
	have, p := runLW(t, env, "claim", "run", "job", "--root", root, "--", "touch", ran)
	stderr := p.stderr.String()
	if have != cli.ExitConflict || exists(ran) {
		t.Fatalf("want %d and nothing run, have %d\n%s", cli.ExitConflict, have, stderr)
	}
	ends := time.UnixMilli(expires).UTC().Format(time.RFC3339)
	if !strings.Contains(stderr, "until "+ends) || !regexp.MustCompile(`\(in (9m5\ds|10m0s)\)`).MatchString(stderr) ||
		!strings.Contains(stderr, "is gone from this host") {
		t.Fatalf("want when the TTL ends (%s) and how long from now, have:\n%s", ends, stderr)
	}
	m := regexp.MustCompile(`free the key now with: (leasewrap claim release .*?)(?: kind=| key=|\n|$)`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("want the command that frees it, have:\n%s", stderr)
	}
	if want := "leasewrap claim release job --holder gone-holder --root '" + root + "'"; m[1] != want {
		t.Fatalf("want %q, have %q", want, m[1])
	}
	// Run it as printed, through a shell, with this test binary as leasewrap.
	bin := t.TempDir()
	if err := os.Symlink(os.Args[0], filepath.Join(bin, "leasewrap")); err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("sh", "-c", m[1])
	sh.Env = append(append(os.Environ(), env...), asMainEnv+"=1", "PATH="+bin+":"+os.Getenv("PATH"))
	if out, err := sh.CombinedOutput(); err != nil || !strings.Contains(string(out), `"released"`) {
		t.Fatalf("%s: %v\n%s", m[1], err, out)
	}
	if exists(claimFile(root, "job")) {
		t.Fatal("the printed command did not free the key")
	}
	if have, p := runLW(t, env, "claim", "run", "job", "--root", root, "--", "touch", ran); have != 0 || !exists(ran) {
		t.Fatalf("after the release: want 0 and the command run, have %d\n%s", have, &p.stderr)
	}
}
