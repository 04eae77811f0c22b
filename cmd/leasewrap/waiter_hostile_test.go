package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// What users and hostile environments do to a waiting run: signals at the
// waiting command or its wrapper, tracers, a seccomp filter without
// ptrace, many waiters on one lock.

// runsOnce is a command that appends one line to count and exits code.
func runsOnce(count string, code int) []string {
	return []string{"sh", "-c", fmt.Sprintf("echo ran >> %s; exit %d", count, code)}
}

// runs is how many times a runsOnce command ran.
func runs(count string) int {
	b, _ := os.ReadFile(count)
	return strings.Count(string(b), "ran\n")
}

// gateOf is the exec gate among pid's children: a child running this
// test binary (leasewrap re-executed).
func gateOf(pid int) int {
	for _, c := range childrenOf(pid) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c))
		if argv0, _, _ := strings.Cut(string(b), "\x00"); argv0 == os.Args[0] {
			return c
		}
	}
	return 0
}

// TestSignalAtTheWaitingCommand: a claim's command waits in the exec gate
// while the --on-start hook runs. A signal sent to it does what it would
// do to the command started after the grant: SIGWINCH and SIGCONT
// nothing (the job then runs once with its exit code), SIGTERM, SIGUSR1
// and SIGQUIT end the run with 128+N without running the command or
// starting it again, and never with a Go stack on the job's stderr.
func TestSignalAtTheWaitingCommand(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		want int // 7: the job ran
	}{
		{syscall.SIGWINCH, 7},
		{syscall.SIGCONT, 7},
		{syscall.SIGTERM, 128 + int(syscall.SIGTERM)},
		{syscall.SIGUSR1, 128 + int(syscall.SIGUSR1)},
		{syscall.SIGQUIT, 128 + int(syscall.SIGQUIT)},
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			root, env := claimEnv(t)
			hookReady, hookGo, count := filepath.Join(root, "hook-ready"), filepath.Join(root, "hook-go"), filepath.Join(root, "count")
			args := append([]string{"claim", "run", "job", "--root", root, "--on-start", holdUntil(hookReady, hookGo), "--"}, runsOnce(count, 7)...)
			p := startLW(t, env, args...)
			t.Cleanup(func() { os.WriteFile(hookGo, nil, 0o644) })
			waitFor(t, "the on-start hook", func() bool { return exists(hookReady) })
			gate := gateOf(p.Cmd.Process.Pid)
			if gate == 0 {
				t.Fatalf("no exec gate among the children %v of the waiting leasewrap", childrenOf(p.Cmd.Process.Pid))
			}
			if err := unix.Kill(gate, tc.sig); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(hookGo, nil, 0o644)
			if have := p.wait(t); have != tc.want {
				t.Fatalf("want %d, have %d\n%s", tc.want, have, &p.stderr)
			}
			if want, have := map[bool]int{true: 1, false: 0}[tc.want == 7], runs(count); have != want {
				t.Fatalf("want the command run %d times, have %d\n%s", want, have, &p.stderr)
			}
			if strings.Contains(p.stderr.String(), "goroutine ") {
				t.Fatalf("a Go stack on the job's stderr\n%s", &p.stderr)
			}
			if have, q := runLW(t, env, "claim", "run", "job", "--root", root, "--", "true"); have != 0 {
				t.Fatalf("the claim is not free after the run: %d\n%s", have, &q.stderr)
			}
		})
	}
}

// TestSignalAtTheWaitingWrapper: SIGWINCH, SIGCONT and SIGUSR1 sent to a
// leasewrap waiting behind a holder change nothing: once the holder lets
// go the job runs once with its exit code. flock and claim.
func TestSignalAtTheWaitingWrapper(t *testing.T) {
	needFlock1(t)
	for _, kind := range []string{"flock", "claim"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			ready, gone, count := filepath.Join(dir, "ready"), filepath.Join(dir, "gone"), filepath.Join(dir, "count")
			env, args := holderFor(t, kind, dir, ready, gone)
			p := startLW(t, env, append(append(args, "--wait", "60s", "--"), runsOnce(count, 7)...)...)
			waitFor(t, "the waiter to wait", func() bool { return strings.Contains(p.stderr.String(), "lease held; waiting") })
			for _, s := range []syscall.Signal{syscall.SIGWINCH, syscall.SIGCONT, syscall.SIGUSR1} {
				p.Cmd.Process.Signal(s)
			}
			os.WriteFile(gone, nil, 0o644)
			if have := p.wait(t); have != 7 {
				t.Fatalf("want 7, have %d\n%s", have, &p.stderr)
			}
			if have := runs(count); have != 1 {
				t.Fatalf("want the command run once, have %d", have)
			}
		})
	}
}

// holderFor starts a holder of kind's lease in dir (until gone exists)
// and returns the environment and arguments of a run of the same lease.
func holderFor(t *testing.T, kind, dir, ready, gone string) (env, args []string) {
	t.Helper()
	switch kind {
	case "flock":
		lock := filepath.Join(dir, "job.lock")
		startFlock1(t, "-x", lock, ready, gone)
		return nil, []string{"flock", "run", lock}
	case "claim":
		root, env := claimEnv(t)
		holder := startLW(t, env, "claim", "run", "job", "--root", root, "--", "sh", "-c", holdUntil(ready, gone))
		t.Cleanup(func() { os.WriteFile(gone, nil, 0o644); holder.wait(t) })
		waitFor(t, "the holder's child", func() bool { return exists(ready) })
		return env, []string{"claim", "run", "job", "--root", root}
	}
	t.Fatalf("no holder for %s", kind)
	return nil, nil
}

// noPtraceEnv makes the test binary install a seccomp filter that kills
// the process on ptrace(2), then exec itself as leasewrap with its
// arguments (TestMain): what systemd's SystemCallFilter=@system-service
// or a container runtime's profile does.
const noPtraceEnv = "LEASEWRAP_TEST_NO_PTRACE"

// execWithoutPtrace installs that filter on this thread and execs the
// test binary as leasewrap; it returns only on failure.
func execWithoutPtrace() {
	runtime.LockOSThread() // the filter is the thread's, and exec keeps it
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "no_new_privs:", err)
		os.Exit(90)
	}
	filter := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.SYS_PTRACE},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_KILL_PROCESS},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); e != 0 {
		fmt.Fprintln(os.Stderr, "seccomp:", e)
		os.Exit(90)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, noPtraceEnv+"=") {
			env = append(env, kv)
		}
	}
	err := syscall.Exec(os.Args[0], os.Args, append(env, asMainEnv+"=1"))
	fmt.Fprintln(os.Stderr, "exec:", err)
	os.Exit(90)
}

// TestSeccompWithoutPtraceChangesNothing: under a filter that kills on
// ptrace(2) (checked: strace dies of SIGSYS there), `claim run` and a
// `flock run --wait` behind a holder run their job once with its exit
// code.
func TestSeccompWithoutPtraceChangesNothing(t *testing.T) {
	needFlock1(t)
	strace := needStrace(t)
	noPtrace := func(env []string, args ...string) *proc {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(append(os.Environ(), env...), noPtraceEnv+"=1", "FNO_EVENTS_PATH="+filepath.Join(t.TempDir(), "events.jsonl"))
		return startProc(t, cmd)
	}
	t.Run("the filter kills ptrace", func(t *testing.T) {
		root, env := claimEnv(t)
		p := noPtrace(env, "claim", "run", "job", "--root", root, "--", strace, "-o", "/dev/null", "true")
		if have := p.wait(t); have != 128+int(syscall.SIGSYS) {
			t.Fatalf("want strace killed by SIGSYS (%d), have %d\n%s", 128+int(syscall.SIGSYS), have, &p.stderr)
		}
	})
	t.Run("claim run", func(t *testing.T) {
		root, env := claimEnv(t)
		count := filepath.Join(root, "count")
		p := noPtrace(env, append([]string{"claim", "run", "job", "--root", root, "--"}, runsOnce(count, 7)...)...)
		if have := p.wait(t); have != 7 || runs(count) != 1 {
			t.Fatalf("want 7 and one run, have %d and %d runs\n%s", have, runs(count), &p.stderr)
		}
	})
	for _, kind := range []string{"flock", "claim"} {
		t.Run(kind+" run --wait behind a holder", func(t *testing.T) {
			dir := t.TempDir()
			ready, gone, count := filepath.Join(dir, "ready"), filepath.Join(dir, "gone"), filepath.Join(dir, "count")
			env, args := holderFor(t, kind, dir, ready, gone)
			p := noPtrace(env, append(append(args, "--wait", "60s", "--"), runsOnce(count, 7)...)...)
			waitFor(t, "the waiter to wait", func() bool { return strings.Contains(p.stderr.String(), "lease held; waiting") })
			os.WriteFile(gone, nil, 0o644)
			if have := p.wait(t); have != 7 || runs(count) != 1 {
				t.Fatalf("want 7 and one run, have %d and %d runs\n%s", have, runs(count), &p.stderr)
			}
		})
	}
}

func needStrace(t *testing.T) string {
	t.Helper()
	strace, err := exec.LookPath("strace")
	testutil.Need(t, "strace", err)
	if out, err := exec.Command(strace, "-f", "-o", "/dev/null", "true").CombinedOutput(); err != nil {
		testutil.Need(t, "strace that can trace here", fmt.Errorf("%w: %s", err, out))
	}
	return strace
}

// TestTracersChangeNothing: `strace -f leasewrap flock|claim run --wait`
// behind a holder, and a job that is itself a tracer (`-- strace -f
// CMD`), each run the job exactly once with its exit code.
func TestTracersChangeNothing(t *testing.T) {
	needFlock1(t)
	strace := needStrace(t)
	for _, kind := range []string{"flock", "claim"} {
		t.Run(kind+"/under strace -f, waiting", func(t *testing.T) {
			dir := t.TempDir()
			ready, gone, count := filepath.Join(dir, "ready"), filepath.Join(dir, "gone"), filepath.Join(dir, "count")
			env, args := holderFor(t, kind, dir, ready, gone)
			cmd := exec.Command(strace, append([]string{"-f", "-o", "/dev/null", os.Args[0]}, append(append(args, "--wait", "60s", "--"), runsOnce(count, 7)...)...)...)
			cmd.Env = append(append(os.Environ(), env...), asMainEnv+"=1", "FNO_EVENTS_PATH="+filepath.Join(dir, "events.jsonl"))
			p := startProc(t, cmd)
			waitFor(t, "the waiter to wait", func() bool { return strings.Contains(p.stderr.String(), "lease held; waiting") })
			os.WriteFile(gone, nil, 0o644)
			if have := p.wait(t); have != 7 || runs(count) != 1 {
				t.Fatalf("want 7 and one run, have %d and %d runs\n%s", have, runs(count), &p.stderr)
			}
		})
		t.Run(kind+"/a job that traces", func(t *testing.T) {
			dir := t.TempDir()
			count := filepath.Join(dir, "count")
			var env, args []string
			if kind == "flock" {
				args = []string{"flock", "run", filepath.Join(dir, "job.lock")}
			} else {
				var root string
				root, env = claimEnv(t)
				args = []string{"claim", "run", "job", "--root", root}
			}
			have, p := runLW(t, env, append(append(args, "--", strace, "-f", "-o", "/dev/null"), runsOnce(count, 6)...)...)
			if have != 6 || runs(count) != 1 {
				t.Fatalf("want 6 and one run, have %d and %d runs\n%s", have, runs(count), &p.stderr)
			}
		})
	}
}

// TestManyFlockWaitersHaveNoChildren: 20 waiters on one lock wait in the
// kernel with no child process each (as flock -w does), and once the
// holder lets go each runs its job once.
func TestManyFlockWaitersHaveNoChildren(t *testing.T) {
	needFlock1(t)
	const n = 20
	dir := t.TempDir()
	lock, ready, gone, count := filepath.Join(dir, "job.lock"), filepath.Join(dir, "ready"), filepath.Join(dir, "gone"), filepath.Join(dir, "count")
	startFlock1(t, "-x", lock, ready, gone)
	var waiters []*proc
	for range n {
		waiters = append(waiters, startLW(t, nil, append([]string{"flock", "run", lock, "--wait", "5m", "--log-level", "debug", "--"}, runsOnce(count, 0)...)...))
	}
	for i, w := range waiters {
		waitFor(t, fmt.Sprintf("waiter %d to block in flock(2)", i), func() bool { return strings.Contains(w.stderr.String(), "waiting for the grant") })
	}
	for i, w := range waiters {
		if kids := childrenOf(w.Cmd.Process.Pid); len(kids) != 0 {
			t.Fatalf("waiter %d has child processes %v while it waits", i, kids)
		}
	}
	os.WriteFile(gone, nil, 0o644)
	for i, w := range waiters {
		if have := w.wait(t); have != 0 {
			t.Fatalf("waiter %d: want 0, have %d\n%s", i, have, &w.stderr)
		}
	}
	if have := runs(count); have != n {
		t.Fatalf("want %d runs, have %d", n, have)
	}
}
