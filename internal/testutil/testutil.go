// Package testutil holds the helpers the tests of several packages share:
// bounded polling and helper processes whose exit and output are observed
// with deadlines, which Scale stretches to the machine. It is imported
// only by _test.go files.
package testutil

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/linewriter"
	"github.com/leasewrap/leasewrap/internal/procstat"
)

// pollEvery is how often Poll and WaitFor look at their condition.
const pollEvery = 5 * time.Millisecond

// Poll calls cond every 5 ms until it returns true (nil) or within
// (stretched by Scale) has passed (an error). For helper processes, which
// have no *testing.T.
func Poll(within time.Duration, cond func() bool) error {
	within = Scale(within)
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v", within)
		}
		time.Sleep(pollEvery)
	}
	return nil
}

// WaitFor polls cond every 5 ms and fails t if it is not true within
// (stretched by Scale).
func WaitFor(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	if err := Poll(within, cond); err != nil {
		t.Fatalf("%v waiting for %s", err, what)
	}
}

// ReadPID waits up to within for a pid that a test child wrote to path
// (by write-then-rename, so it is never read half-written).
func ReadPID(t testing.TB, path string, within time.Duration) int {
	t.Helper()
	var pid int
	WaitFor(t, "a pid in "+path, within, func() bool {
		b, err := os.ReadFile(path)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}

// Proc is a started process whose exit is observed in the background; it
// is killed (and reaped) when the test ends, if it still runs.
type Proc struct {
	Cmd   *exec.Cmd
	Stdin io.WriteCloser // set by StartPiped
	out   *bufio.Reader
	done  chan struct{}
	err   error
}

// Start starts cmd.
func Start(t testing.TB, cmd *exec.Cmd) *Proc {
	t.Helper()
	return start(t, &Proc{Cmd: cmd})
}

// StartPiped starts cmd with pipes on its stdin (p.Stdin) and stdout
// (read with p.Line).
func StartPiped(t testing.TB, cmd *exec.Cmd) *Proc {
	t.Helper()
	p := &Proc{Cmd: cmd}
	var err error
	if p.Stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	// Our own pipe, not StdoutPipe: Wait, which runs in the background,
	// closes a StdoutPipe, and lines written before the exit would be lost.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	cmd.Stdout = w
	p.out = bufio.NewReader(r)
	start(t, p)
	w.Close() // the child has its copy
	return p
}

func start(t testing.TB, p *Proc) *Proc {
	t.Helper()
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.done = make(chan struct{})
	go func() {
		p.err = p.Cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		if !p.Exited() {
			p.Cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// Sleeper starts a live process (sleep 60) to anchor leases and claims
// to, holding files as its fd 3 onward; it is killed and reaped when the
// test ends, if Kill did not end it first.
func Sleeper(t testing.TB, files ...*os.File) *Proc {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.ExtraFiles = files
	return Start(t, cmd)
}

// Pid is the process's pid.
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Done is closed once the process has exited and was reaped.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited (and was reaped).
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is the process's exit error; meaningful once Exited.
func (p *Proc) Err() error {
	if !p.Exited() {
		return errors.New("still running")
	}
	return p.err
}

// Wait waits for the process to exit and returns its exit error; it fails
// t if the process has not exited within (stretched by Scale).
func (p *Proc) Wait(t testing.TB, within time.Duration) error {
	t.Helper()
	within = Scale(within)
	select {
	case <-p.done:
		return p.err
	case <-time.After(within):
		t.Fatalf("pid %d (%s) did not exit within %v", p.Pid(), p.Cmd.Path, within)
	}
	return nil
}

// WaitOK is Wait that also fails t when the process did not succeed.
func (p *Proc) WaitOK(t testing.TB, within time.Duration) {
	t.Helper()
	if err := p.Wait(t, within); err != nil {
		t.Fatalf("pid %d (%s): want success, have %v", p.Pid(), p.Cmd.Path, err)
	}
}

// Stop closes the process's stdin (StartPiped), which tells a helper to
// let go of what it holds, and waits for its exit as Wait does.
func (p *Proc) Stop(t testing.TB, within time.Duration) error {
	t.Helper()
	p.Stdin.Close()
	return p.Wait(t, within)
}

// Kill SIGKILLs the process, leaving what it holds as a crash leaves it,
// and waits for it to be reaped as Wait does.
func (p *Proc) Kill(t testing.TB, within time.Duration) {
	t.Helper()
	p.Cmd.Process.Kill()
	p.Wait(t, within)
}

// Line returns the next line of the process's stdout (StartPiped), without
// its line end; it fails t on a read error or when none comes within
// (stretched by Scale).
func (p *Proc) Line(t testing.TB, within time.Duration) string {
	t.Helper()
	within = Scale(within)
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := p.out.ReadString('\n')
		ch <- res{strings.TrimSpace(s), err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("pid %d: read: %v (have %q)", p.Pid(), r.err, r.s)
		}
		return r.s
	case <-time.After(within):
		t.Fatalf("pid %d: no output within %v", p.Pid(), within)
	}
	return ""
}

// WaitFile waits up to within for path to hold something that ends in a
// line end (written whole, by write-then-rename or a shell's echo) and
// returns it without surrounding white space.
func WaitFile(t testing.TB, path string, within time.Duration) string {
	t.Helper()
	var s string
	WaitFor(t, path+" written", within, func() bool {
		b, err := os.ReadFile(path)
		s = string(b)
		return err == nil && strings.HasSuffix(s, "\n")
	})
	return strings.TrimSpace(s)
}

// WaitGone waits up to within for pid to be gone (a zombie counts as
// gone) and returns how long that took. Unlike the other waits here,
// within is not stretched: callers assert a safety bound with it (a job
// gone before its lease could lapse).
func WaitGone(t testing.TB, pid int, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(within)
	for procstat.Running(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still alive %v later", pid, within)
		}
		time.Sleep(pollEvery)
	}
	return time.Since(start)
}

// ExitCode is the code a shell reports for a finished process: its exit
// status, or 128+N when signal N ended it.
func ExitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// Buffer is a bytes.Buffer safe to read while a process's output is
// copied into it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Get GETs http://addr+path with a 5 s timeout (stretched by Scale) and returns the status and
// body; status 0 (with the error as body) means the connection failed.
func Get(addr, path string) (int, string) {
	c := &http.Client{Timeout: Scale(5 * time.Second)}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Need skips t when err says that what the test needs (named by what) is
// missing, except under CI (CI set), where .ci/run installs everything the
// tests need and a missing piece fails the test instead of hiding it.
func Need(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s: %v (CI must offer it: .ci/run installs it)", what, err)
	}
	t.Skipf("%s: %v", what, err)
}

// Group is a process in a process group of its own whose exit is observed
// in the background: Done is closed once it has exited and its output has
// been copied; then Code and Ended say how and when. The whole group is
// SIGKILLed, and the process reaped, when the test ends.
type Group struct {
	Cmd   *exec.Cmd
	done  chan struct{}
	code  int
	ended time.Time
}

// StartGroup starts cmd in a new process group.
func StartGroup(t testing.TB, cmd *exec.Cmd) *Group {
	t.Helper()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	g := &Group{Cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		g.ended = time.Now()
		g.code = ExitCode(cmd.ProcessState)
		close(g.done)
	}()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-g.done
	})
	return g
}

// Done is closed when the process has exited.
func (g *Group) Done() <-chan struct{} { return g.done }

// Running reports whether the process has not exited.
func (g *Group) Running() bool {
	select {
	case <-g.done:
		return false
	default:
		return true
	}
}

// Code is the exit code (ExitCode), or -1 while the process runs.
func (g *Group) Code() int {
	if g.Running() {
		return -1
	}
	return g.code
}

// Ended is when the exit was seen, or the zero time while the process runs.
func (g *Group) Ended() time.Time {
	if g.Running() {
		return time.Time{}
	}
	return g.ended
}

// Lines is an io.Writer that keeps what is written (String) and hands
// each complete line, without its line end, to each as it comes.
type Lines struct {
	Buffer
	lines linewriter.Writer
}

// NewLines returns a Lines that calls each with every line.
func NewLines(each func(line string)) *Lines {
	return &Lines{lines: linewriter.Writer{Each: func(l string) error { each(l); return nil }}}
}

func (l *Lines) Write(p []byte) (int, error) {
	l.Buffer.Write(p)
	return l.lines.Write(p)
}
