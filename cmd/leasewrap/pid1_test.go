package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestPID1ReapsOrphansAndKeepsTheChildsStatus runs leasewrap as PID 1 of a
// fresh PID namespace, the way a container entrypoint runs. The child
// orphans a grandchild that dies while the child still runs: as PID 1,
// leasewrap must reap it (no zombie left) and still exit with the child's
// own status.
func TestPID1ReapsOrphansAndKeepsTheChildsStatus(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare(1) not installed (util-linux); .ci/run installs it")
	}
	if out, err := exec.Command(unshare, "--pid", "--fork", "--mount-proc", "true").CombinedOutput(); err != nil {
		t.Skipf("the kernel refuses a new PID namespace here (%v: %s)", err, strings.TrimSpace(string(out)))
	}
	root, env := claimEnv(t)
	script := `(sleep 0.05 &); sleep 0.5; echo "pid1=$(cat /proc/1/comm) zombies=$(cat /proc/[0-9]*/stat 2>/dev/null | grep -c ') Z ')"; exit 5`
	cmd := exec.Command(unshare, "--pid", "--fork", "--mount-proc", os.Args[0],
		"claim", "run", "entry", "--root", root, "--", "sh", "-c", script)
	cmd.Env = append(os.Environ(), append(env, asMainEnv+"=1")...)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 5 {
		t.Fatalf("want the child's 5 through leasewrap as PID 1, have %d\n%s", code, out)
	}
	if !strings.Contains(string(out), "zombies=0") {
		t.Fatalf("want the orphaned grandchild reaped by PID 1, have: %s", out)
	}
	if !strings.Contains(string(out), "pid1="+strings.TrimSpace(readComm(t))) {
		t.Fatalf("leasewrap was not PID 1 of the namespace: %s", out)
	}
}

func readComm(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
