package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// unshareArgs returns the command prefix that runs a process in a new pid
// namespace with its own /proc, as a container does, or skips the test
// where the kernel refuses one (unprivileged, no user namespaces). The
// namespace's init is killed with unshare (--kill-child), so nothing
// outlives the test.
func unshareArgs(t *testing.T) []string {
	t.Helper()
	path, err := exec.LookPath("unshare")
	testutil.Need(t, "unshare (util-linux)", err)
	var refusals []string
	for _, prefix := range [][]string{
		{path, "--pid", "--fork", "--mount-proc", "--kill-child"},
		{path, "--user", "--map-root-user", "--pid", "--fork", "--mount-proc", "--kill-child"},
	} {
		out, err := exec.Command(prefix[0], append(prefix[1:], "true")...).CombinedOutput()
		if err == nil {
			return prefix
		}
		refusals = append(refusals, strings.Join(prefix, " ")+": "+strings.TrimSpace(string(out)))
	}
	t.Skipf("the kernel refuses a new pid namespace here:\n%s", strings.Join(refusals, "\n"))
	return nil
}

// startInNS starts the test binary as leasewrap in a pid namespace of its
// own (it is PID 1 there, as a container entrypoint is).
func startInNS(t *testing.T, prefix, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(prefix[0], append(append(prefix[1:], os.Args[0]), args...)...)
	cmd.Env = append(append(os.Environ(), asMainEnv+"=1"), env...)
	return startProc(t, cmd)
}

// TestClaimRunContainersSharingARoot: two wrappers in separate pid
// namespaces (containers) on one claims root. With default flags the
// second gets the conflict code while the first runs: the claim's TTL
// protects it where its pid cannot be checked. With --ttl 0 (pid-only)
// the second reads the first's claim as stale and runs beside it: the
// hazard the default avoids, and the proof that the namespaces differ.
func TestClaimRunContainersSharingARoot(t *testing.T) {
	prefix := unshareArgs(t)
	for _, tc := range []struct {
		name  string
		flags []string
		want  int
	}{
		{"default flags", nil, 75},
		{"--ttl 0", []string{"--ttl", "0"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, env := claimEnv(t)
			ready, gone, ran := filepath.Join(root, "ready"), filepath.Join(root, "gone"), filepath.Join(root, "ran")
			args := append([]string{"claim", "run", "job", "--root", root}, tc.flags...)
			first := startInNS(t, prefix, env, append(args, "--", "sh", "-c", holdUntil(ready, gone))...)
			waitFor(t, "the first container's job", func() bool { return exists(ready) })
			before, err := os.ReadFile(claimFile(root, "job"))
			if err != nil {
				t.Fatal(err)
			}

			second := startInNS(t, prefix, env, append(args, "--", "touch", ran)...)
			if have := second.wait(t); have != tc.want {
				t.Fatalf("second container: want %d, have %d\n%s", tc.want, have, &second.stderr)
			}
			if tc.want == 75 {
				if exists(ran) {
					t.Fatal("the second container's job ran while the first's did")
				}
				if after, _ := os.ReadFile(claimFile(root, "job")); string(after) != string(before) {
					t.Fatalf("the refused wrapper changed the claim:\n%s\nwas:\n%s", after, before)
				}
			} else if !exists(ran) {
				t.Fatalf("--ttl 0: want the second job to run (the pid-only claim reads stale across namespaces), it did not\n%s", &second.stderr)
			}
			os.WriteFile(gone, nil, 0o644)
			have := first.wait(t)
			if tc.want == 75 {
				if have != 0 {
					t.Fatalf("first container: want 0, have %d\n%s", have, &first.stderr)
				}
				if exists(claimFile(root, "job")) {
					t.Fatal("the first container's claim was not released")
				}
			}
			t.Logf("first container exited %d", have)
		})
	}
}

// TestClaimRunSameHolderTwice: two overlapping `claim run nightly --holder
// nightly`: the second exits 75 and does not touch the first's claim,
// which survives until the first's job ends.
func TestClaimRunSameHolderTwice(t *testing.T) {
	for _, ttl := range []string{"0", "2m"} {
		t.Run("ttl="+ttl, func(t *testing.T) {
			root, env := claimEnv(t)
			ready, gone, ran := filepath.Join(root, "ready"), filepath.Join(root, "gone"), filepath.Join(root, "ran")
			first := startLW(t, env, "claim", "run", "nightly", "--root", root, "--holder", "nightly", "--ttl", ttl,
				"--", "sh", "-c", holdUntil(ready, gone))
			waitFor(t, "the first job", func() bool { return exists(ready) })
			before, err := os.ReadFile(claimFile(root, "nightly"))
			if err != nil {
				t.Fatal(err)
			}

			have, second := runLW(t, env, "claim", "run", "nightly", "--root", root, "--holder", "nightly", "--ttl", ttl, "--", "touch", ran)
			if have != 75 {
				t.Fatalf("second fire: want 75, have %d\n%s", have, &second.stderr)
			}
			if !strings.Contains(second.stderr.String(), "held by nightly") {
				t.Fatalf("want the conflict to name the holder, have:\n%s", &second.stderr)
			}
			if exists(ran) {
				t.Fatal("the second fire's job ran")
			}
			if after, _ := os.ReadFile(claimFile(root, "nightly")); string(after) != string(before) {
				t.Fatalf("the second fire rewrote the claim:\n%s\nwas:\n%s", after, before)
			}

			os.WriteFile(gone, nil, 0o644)
			if have := first.wait(t); have != 0 {
				t.Fatalf("first fire: want 0 (its claim intact to the end), have %d\n%s", have, &first.stderr)
			}
			if exists(claimFile(root, "nightly")) {
				t.Fatal("the first fire's claim was not released")
			}
		})
	}
}
