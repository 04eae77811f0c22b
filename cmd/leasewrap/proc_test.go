package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/procstat"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// proc is a leasewrap process under test. Its output goes to files, not
// pipes, so a child that outlives leasewrap cannot hold up the wait.
type proc struct {
	*testutil.Proc
	stdout, stderr output
}

// output is a captured stream, read in full on each String call.
type output struct{ f *os.File }

func (o *output) String() string {
	b, _ := os.ReadFile(o.f.Name())
	return string(b)
}

func (o *output) Bytes() []byte { return []byte(o.String()) }

// startLW starts the test binary as leasewrap with args and extra env.
func startLW(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	cmd := leasewrapCmd(t, args...)
	cmd.Env = append(cmd.Env, env...)
	return startProc(t, cmd)
}

// startProc starts cmd (leasewrap, or a wrapper around it such as
// unshare) with its output captured.
func startProc(t *testing.T, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{}
	dir := t.TempDir()
	for _, o := range []*output{&p.stdout, &p.stderr} {
		f, err := os.CreateTemp(dir, "out")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		o.f = f
	}
	cmd.Stdout, cmd.Stderr = p.stdout.f, p.stderr.f
	p.Proc = testutil.Start(t, cmd)
	return p
}

// wait returns the exit code, failing the test after 30 s (stretched by
// testutil.Scale).
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(testutil.Scale(30 * time.Second)):
		p.Cmd.Process.Kill()
		t.Fatalf("leasewrap %v did not exit in time\nstdout:\n%s\nstderr:\n%s", p.Cmd.Args[1:], &p.stdout, &p.stderr)
	}
	return p.Cmd.ProcessState.ExitCode()
}

// runLW runs leasewrap to completion.
func runLW(t *testing.T, env []string, args ...string) (int, *proc) {
	t.Helper()
	p := startLW(t, env, args...)
	return p.wait(t), p
}

// waitFor polls cond every 5 ms for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.WaitFor(t, what, 10*time.Second, cond)
}

// holdUntil is a child script that signals readiness by creating ready
// and holds its lease until the test creates gone: no fixed sleep has to
// outlast a loaded machine.
func holdUntil(ready, gone string) string {
	return "touch " + ready + "; " + waitUntil(gone)
}

// pidThenHoldUntil is a child script that writes its pid to pidFile (by
// rename, so it is never read half-written) and holds until gone exists.
func pidThenHoldUntil(pidFile, gone string) string {
	return "echo $$ > " + pidFile + ".tmp; mv " + pidFile + ".tmp " + pidFile + "; " + waitUntil(gone)
}

// waitUntil also ends when gone's directory is removed (the test ended
// without creating gone): no test leaves a polling loop behind.
func waitUntil(gone string) string {
	return "while [ ! -e " + gone + " ] && [ -d " + filepath.Dir(gone) + " ]; do sleep 0.02; done"
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool { return procstat.Running(pid) }
