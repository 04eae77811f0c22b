// Package seedharness finds the Rust interop harnesses (the seeds' own
// code, built by `make harnesses`, i.e. .ci/rust-harnesses.sh) for the
// tests that run leasewrap against them. Only tests import it.
package seedharness

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Bin returns the harness binary: $env when set, else
// testdata/<dir>/target/debug/<name> relative to the test's package
// directory, where `make harnesses` builds it. A missing harness skips the
// test, except under CI (env CI set), where it fails: an interop test must
// not silently skip there.
func Bin(t testing.TB, env, dir, name string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	p, err := filepath.Abs(filepath.Join("testdata", dir, "target", "debug", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		msg := "Rust harness " + p + " not built: run `make harnesses` (.ci/rust-harnesses.sh), or set " + env
		if os.Getenv("CI") != "" {
			t.Fatal(msg + " (CI is set: a missing interop harness is a failure)")
		}
		t.Skip(msg)
	}
	return p
}

// Run runs cmd to its end, bounded by a generous 30 s, and returns its
// trimmed standard output and exit code. cmd.Stderr defaults to the test's
// standard error.
func Run(t testing.TB, cmd *exec.Cmd) (string, int) {
	t.Helper()
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.Output(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v: no exit within 30s", cmd.Args)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	return strings.TrimSpace(string(out)), code
}

// Proc is a harness process that keeps running (holding what it took)
// until its standard input closes.
type Proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	done  chan struct{}
}

// Start starts cmd with pipes on its standard input and output; it is
// killed and reaped at the test's cleanup.
func Start(t testing.TB, cmd *exec.Cmd) *Proc {
	t.Helper()
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Proc{cmd: cmd, stdin: stdin, lines: make(chan string, 16), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); <-p.done })
	return p
}

// Line is the process's next output line (trimmed), within 15 s.
func (p *Proc) Line(t testing.TB) string {
	t.Helper()
	select {
	case l := <-p.lines:
		return strings.TrimSpace(l)
	case <-p.done:
		select {
		case l := <-p.lines:
			return strings.TrimSpace(l)
		default:
		}
		t.Fatalf("%v exited without the expected line", p.cmd.Args)
	case <-time.After(15 * time.Second):
		t.Fatalf("want a line from %v within 15s", p.cmd.Args)
	}
	return ""
}

// Exited reports whether the process has exited (and its output is read).
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// CloseStdin tells the process to let go of what it holds and exit.
func (p *Proc) CloseStdin() { p.stdin.Close() }

// Wait waits for the process to exit, within 15 s.
func (p *Proc) Wait(t testing.TB) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("want %v to exit within 15s", p.cmd.Args)
	}
}

// Stop closes standard input and waits for the exit.
func (p *Proc) Stop(t testing.TB) {
	t.Helper()
	p.CloseStdin()
	p.Wait(t)
}

// Kill SIGKILLs the process (what it holds is left as a crash leaves it)
// and waits for it.
func (p *Proc) Kill(t testing.TB) {
	t.Helper()
	p.cmd.Process.Kill()
	p.Wait(t)
}
