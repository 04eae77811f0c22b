// Package reliability is leasewrap's crash, race and bad-input battery, a
// directory of tests only. They build leasewrap with the crash points of
// internal/fault compiled in (-tags leasewrap_faults), drive every point for
// every lease kind, storm one key with many wrappers, admin verbs, SIGKILL
// and SIGSTOP, and feed the CLI hostile files, names and environments. After
// every scenario they check the invariants with a fresh leasewrap and with an
// independent reader of the files (not with lease/*). Scenarios, results and
// commands: reliability/LOG.md (summary: docs/RELIABILITY.md).
package reliability

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/testutil"

	// The battery drives Linux-only processes: on another OS this import
	// fails the build with one message saying so.
	_ "github.com/leasewrap/leasewrap/internal/linuxonly"
)

// The test binary doubles as the wrapped command: with childEnv set it is a
// witness child (see runChild) instead of running tests.
const (
	childEnv     = "RELIABILITY_CHILD"      // witness log path
	childIDEnv   = "RELIABILITY_CHILD_ID"   // id written into the log
	childHoldEnv = "RELIABILITY_CHILD_HOLD" // how long to hold (Go duration)
	childExitEnv = "RELIABILITY_CHILD_EXIT" // exit code
	// childEscapeEnv=1: the witness first starts an escapee, a process
	// that leaves the job's process group (setsid), closes its inherited
	// descriptors, ignores SIGTERM and appends "beat ID NS" to
	// escapeeEnv's log every 5 ms for up to 3 s: while it beats, the job
	// is not over.
	childEscapeEnv = "RELIABILITY_CHILD_ESCAPE"
	escapeeEnv     = "RELIABILITY_ESCAPEE"
)

// lwBin is leasewrap built with -tags leasewrap_faults; selfBin is this
// test binary (the witness child).
var lwBin, selfBin string

func TestMain(m *testing.M) {
	if log := os.Getenv(escapeeEnv); log != "" {
		os.Exit(runEscapee(log))
	}
	if log := os.Getenv(childEnv); log != "" {
		os.Exit(runChild(log))
	}
	os.Exit(mainTests(m))
}

func mainTests(m *testing.M) int {
	// Descriptors this process inherited (from a shell or CI runner) must
	// not reach leasewrap, or the descriptor check would blame it for them.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		fmt.Fprintln(os.Stderr, "close_range:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "leasewrap-reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	lwBin = filepath.Join(dir, "leasewrap")
	build := exec.Command("go", "build", "-tags", "leasewrap_faults", "-o", lwBin, "github.com/leasewrap/leasewrap/cmd/leasewrap")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as `make build`
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build leasewrap with faults: %v\n%s", err, out)
		return 1
	}
	if selfBin, err = os.Executable(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Orphans of killed wrappers (their still-running children) are
	// re-parented to us, so the orphan check can see and reap them.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "subreaper:", err)
		return 1
	}
	return m.Run()
}

// monoNs is CLOCK_MONOTONIC in ns: one clock for every process of the host.
func monoNs() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// runChild appends "start ID NS fds=LIST pid=PID wall=NS" to log (O_APPEND), holds, appends
// "stop ID NS" and exits with the asked code.
func runChild(log string) int {
	id := os.Getenv(childIDEnv)
	fds := openFDs()
	appendLine(log, fmt.Sprintf("start %s %d fds=%s pid=%d wall=%d", id, monoNs(), strings.Join(fds, ","), os.Getpid(), time.Now().UnixNano()))
	if os.Getenv(childEscapeEnv) == "1" {
		esc := exec.Command(os.Args[0])
		esc.Env = append(os.Environ(), escapeeEnv+"="+log)
		esc.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := esc.Start(); err != nil {
			return 111
		}
		esc.Process.Release()
	}
	if d, err := time.ParseDuration(os.Getenv(childHoldEnv)); err == nil {
		time.Sleep(d)
	}
	appendLine(log, fmt.Sprintf("stop %s %d", id, monoNs()))
	code, _ := strconv.Atoi(os.Getenv(childExitEnv))
	return code
}

// runEscapee is the witness's escapee (see childEscapeEnv).
func runEscapee(log string) int {
	signal.Ignore(syscall.SIGTERM)
	// Like a daemon, it closes what it inherited: a lease descriptor
	// (fd 3) it kept would keep the lease itself alive.
	if err := unix.CloseRange(3, ^uint(0), 0); err != nil {
		return 111
	}
	id := os.Getenv(childIDEnv)
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		appendLine(log, fmt.Sprintf("beat %s %d", id, monoNs()))
	}
	return 0
}

// openFDs lists the descriptors this process inherited: those without
// FD_CLOEXEC (the Go runtime opens its own, e.g. cgroup files, with it).
func openFDs() []string {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return []string{"?"}
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var out []string
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil || fd == int(d.Fd()) {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue
		}
		out = append(out, n)
	}
	return out
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		os.Exit(111)
	}
	f.WriteString(line + "\n")
	f.Close()
}

// env is a scenario's directory layout and environment.
type env struct {
	t       *testing.T
	dir     string
	witness string
	extra   []string
	strict  bool // the storm's strict job form (strictJobs)
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	return &env{t: t, dir: dir, witness: filepath.Join(dir, "witness.log")}
}

// childArgv is the witness child as a command line.
func (e *env) childArgv() []string { return []string{selfBin} }

func (e *env) childEnv(id string, hold time.Duration, exit int) []string {
	return []string{childEnv + "=" + e.witness, childIDEnv + "=" + id,
		childHoldEnv + "=" + hold.String(), childExitEnv + "=" + strconv.Itoa(exit)}
}

// result of one leasewrap invocation.
type result struct {
	code   int // exit code; 128+N for death by signal N
	signal syscall.Signal
	out    string
	err    string
	pid    int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d (signal %d)\nstdout: %s\nstderr: %s", r.code, r.signal, r.out, r.err)
}

// lwCmd builds a leasewrap command with the scenario's environment.
func (e *env) lwCmd(extraEnv []string, args ...string) *exec.Cmd {
	cmd := exec.Command(lwBin, args...)
	cmd.Env = append(os.Environ(),
		"HOME="+filepath.Join(e.dir, "home"),
		"FNO_EVENTS_PATH="+filepath.Join(e.dir, "events.jsonl"),
		"ORCHESTRATECTL_HOME=",
		"LEASEWRAP_LOG_FORMAT=text",
	)
	cmd.Env = append(cmd.Env, e.extra...)
	cmd.Env = append(cmd.Env, extraEnv...)
	cmd.Dir = e.dir
	return cmd
}

// lw runs leasewrap to completion (bounded by a minute).
func (e *env) lw(extraEnv []string, args ...string) result {
	e.t.Helper()
	return runBounded(e.t, e.lwCmd(extraEnv, args...), nil)
}

// runBounded runs cmd to its end with its output captured; one still
// running after a minute is SIGKILLed (the result shows that signal).
// started, when set, is called with the pid once cmd has started.
func runBounded(t testing.TB, cmd *exec.Cmd, started func(pid int)) result {
	t.Helper()
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	cmd, err := startRetryingTxtBusy(cmd)
	if err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	if started != nil {
		started(cmd.Process.Pid)
	}
	timer := time.AfterFunc(testutil.Scale(time.Minute), func() { cmd.Process.Kill() })
	err = cmd.Wait()
	if !timer.Stop() {
		stderr.WriteString("\n(test: SIGKILLed by runBounded's deadline)\n")
	}
	return resultOf(cmd, err, out.String(), stderr.String())
}

func resultOf(cmd *exec.Cmd, err error, out, stderr string) result {
	r := result{out: out, err: stderr}
	if cmd.Process == nil {
		r.code = -1
		r.err += fmt.Sprint(err)
		return r
	}
	r.pid = cmd.Process.Pid
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		ws := ee.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			r.signal = ws.Signal()
			r.code = 128 + int(ws.Signal())
		} else {
			r.code = ws.ExitStatus()
		}
	} else if err != nil {
		r.code = -1
		r.err += err.Error()
	}
	return r
}

// orphans lists the processes re-parented to this (subreaper) process
// that exec.Cmd does not wait for: children of killed wrappers.
func orphans(known map[int]bool) []int {
	self := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, en := range ents {
		pid, err := strconv.Atoi(en.Name())
		if err != nil || known[pid] {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", en.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[1] == strconv.Itoa(self) {
			out = append(out, pid)
		}
	}
	return out
}

// reapOrphans waits (bounded) for every orphan to exit and reaps it. It
// returns the pids still running at the deadline: leaked processes.
func reapOrphans(known map[int]bool, within time.Duration) []int {
	deadline := time.Now().Add(within)
	for {
		left := orphans(known)
		for _, pid := range left {
			var ws unix.WaitStatus
			unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		}
		left = orphans(known)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// noOrphans fails t if any orphaned process outlives the grace.
func noOrphans(t *testing.T) {
	t.Helper()
	if left := reapOrphans(nil, 20*time.Second); len(left) > 0 {
		for _, pid := range left {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			t.Errorf("orphaned process %d still running: %q", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
			unix.Kill(pid, unix.SIGKILL)
		}
		reapOrphans(nil, 5*time.Second)
	}
}

func cores() int { return runtime.NumCPU() }

// startRetryingTxtBusy starts cmd, retrying (with a fresh copy of it) for
// up to a second while exec fails with ETXTBSY: a binary these tests copied
// can still be open for writing in a child another test goroutine is
// forking at that moment (the descriptor lives until that child's exec).
func startRetryingTxtBusy(cmd *exec.Cmd) (*exec.Cmd, error) {
	for i := 0; ; i++ {
		c := &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir, Stdin: cmd.Stdin,
			Stdout: cmd.Stdout, Stderr: cmd.Stderr, ExtraFiles: cmd.ExtraFiles, SysProcAttr: cmd.SysProcAttr}
		err := c.Start()
		if err == nil || !errors.Is(err, syscall.ETXTBSY) || i == 100 {
			return c, err
		}
		time.Sleep(10 * time.Millisecond)
	}
}
