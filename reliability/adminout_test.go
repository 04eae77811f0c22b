package reliability

import (
	"bytes"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAdminVerbsOnAClosedStdout (issue 17): every local admin verb whose
// answer cannot be written (`… | true`: its stdout a pipe with no reader)
// exits 2, the admin contract's error (0/1/2), saying so; before: 70.
// Each verb runs first with a readable stdout, to show it answers there
// (exit 0 or 1, non-empty output), then on a closed one. (The etcd admin
// verbs: etcd/cmd/leasewrap-etcd TestEtcdAdminVerbsOnAClosedStdout.)
func TestAdminVerbsOnAClosedStdout(t *testing.T) {
	e := newEnv(t)
	root, home, sroot := e.claimRoot(), e.reserveHome(), e.sessionRoot()
	verbs := [][]string{
		{"claim", "acquire", "k", "--holder", "h", "--ttl-ms", "60000", "--root", root},
		{"claim", "status", "k", "--root", root},
		{"claim", "renew", "k", "--holder", "h", "--ttl-ms", "60000", "--root", root},
		{"claim", "list", "--root", root},
		{"claim", "release", "k", "--holder", "h", "--root", root},
		{"reserve", "hash", "k"},
		{"reserve", "lookup", "k", "--home", home},
		{"reserve", "release", "k", "--run-id", "r1", "--home", home},
		{"session", "owners", testSID, "--root", sroot},
	}
	for _, v := range verbs {
		name := strings.Join(v[:2], " ")
		open := e.lw(nil, v...)
		if open.code > 1 || open.out == "" {
			t.Fatalf("%s with a readable stdout: want 0 or 1 and an answer, have %v", name, open)
		}
		closed := closedStdout(t, e, v...)
		t.Logf("RESULT %s | readable: exit %d | closed stdout: exit %d | %s", name, open.code, closed.code, firstLine(closed.err))
		if closed.code != 2 || !strings.Contains(closed.err, "standard output") {
			t.Errorf("%s on a closed stdout: want 2 naming standard output, have %v", name, closed)
		}
	}
}

// TestPrintOnlyOnAClosedStdout: --version and --help only print, so they
// do not catch SIGPIPE (cli.Args.PrintsOnly: catching it starts the
// runtime's signal-mask thread, a third of --version's cost over an empty
// Go program) and end as any filter does when its reader is gone, of
// SIGPIPE. (Every other invocation catches it: the admin verbs above exit
// 2; a run verb's broken stderr is cmd/leasewrap's
// TestBrokenStderrDoesNotStopSupervision.)
func TestPrintOnlyOnAClosedStdout(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{{"--version"}, {"claim", "--help"}} {
		closed := closedStdout(t, e, args...)
		if closed.signal != syscall.SIGPIPE {
			t.Errorf("leasewrap %s on a closed stdout: want death by SIGPIPE, have %v", strings.Join(args, " "), closed)
		}
	}
}

// closedStdout runs leasewrap with its stdout a pipe whose read end is
// closed (as `leasewrap … | true` once true exited).
func closedStdout(t *testing.T, e *env, args ...string) result {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	cmd := e.lwCmd(nil, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	c, err := startRetryingTxtBusy(cmd)
	if err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(time.Minute, func() { c.Process.Kill() })
	defer timer.Stop()
	err = c.Wait()
	return resultOf(c, err, "", stderr.String())
}
