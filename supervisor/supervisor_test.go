package supervisor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// sup is a supervisor process under test.
type sup struct {
	cmd            *exec.Cmd
	stdout, stderr testutil.Buffer
}

func (s *sup) stderrText() string { return s.stderr.String() }

// waitFor polls cond every 5 ms for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.WaitFor(t, what, 10*time.Second, cond)
}

func startSup(t *testing.T, env []string, argv ...string) *sup {
	t.Helper()
	s := &sup{cmd: exec.Command(os.Args[0], argv...)}
	s.cmd.Env = env
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.cmd.Process.Kill() })
	return s
}

// wait returns the supervisor's exit code, failing the test after 20 s.
func (s *sup) wait(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		t.Fatalf("supervisor did not exit within 20s\nstdout:\n%s\nstderr:\n%s", &s.stdout, &s.stderr)
	}
	return s.cmd.ProcessState.ExitCode()
}

func runSup(t *testing.T, env []string, argv ...string) (int, *sup) {
	t.Helper()
	s := startSup(t, env, argv...)
	return s.wait(t), s
}

// waitFile waits up to 10 s for path to exist.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s did not appear within 10s", path)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// modes are the ways a child is started: unanchored (descriptor hand-over)
// and anchored (behind the exec gate).
var modes = []struct{ name, anchored string }{
	{"unanchored", "0"},
	{"anchored", "1"},
}

func TestExitCodesPassThrough(t *testing.T) {
	for _, m := range modes {
		for _, code := range []int{0, 1, 7, 255} {
			t.Run(fmt.Sprintf("%s/%d", m.name, code), func(t *testing.T) {
				dir := t.TempDir()
				have, s := runSup(t, testEnv(dir, "T_ANCHORED="+m.anchored), "sh", "-c", fmt.Sprintf("exit %d", code))
				if have != code {
					t.Fatalf("want exit %d, have %d\n%s", code, have, &s.stderr)
				}
				if _, err := os.Stat(filepath.Join(dir, "job.lease")); !os.IsNotExist(err) {
					t.Fatalf("want the lease released, have %v", err)
				}
				if want, got := fmt.Sprintf("%d lost=false", code), readFile(t, filepath.Join(dir, "job.lease.result")); got != want {
					t.Fatalf("want Finish to see %q, have %q", want, got)
				}
			})
		}
	}
}

func TestSignalDeathIs128PlusN(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			have, s := runSup(t, testEnv(t.TempDir(), "T_ANCHORED="+m.anchored), "sh", "-c", "kill -TERM $$")
			if have != 143 {
				t.Fatalf("want 143, have %d\n%s", have, &s.stderr)
			}
		})
	}
}

func TestAnchoredLeaseRecordsTheChildsPid(t *testing.T) {
	for _, m := range modes[1:] {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			seen := filepath.Join(dir, "seen")
			script := fmt.Sprintf(`read h p < %s/job.lease; echo "$p $$" > %s`, dir, seen)
			if have, s := runSup(t, testEnv(dir, "T_ANCHORED=1"), "sh", "-c", script); have != 0 {
				t.Fatalf("want 0, have %d\n%s", have, &s.stderr)
			}
			f := strings.Fields(readFile(t, seen))
			if len(f) != 2 || f[0] != f[1] {
				t.Fatalf("want the recorded pid to be the child's own pid, have %q", f)
			}
		})
	}
}

func TestHeldLeaseNeverRunsTheCommand(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "job.lease"), []byte("other 1"), 0o644)
			ran := filepath.Join(dir, "ran")
			have, s := runSup(t, testEnv(dir, "T_ANCHORED="+m.anchored), "touch", ran)
			if have != 75 {
				t.Fatalf("want 75, have %d\n%s", have, &s.stderr)
			}
			contains(t, s.stderr.String(), "held by other 1")
			if _, err := os.Stat(ran); !os.IsNotExist(err) {
				t.Fatal("the command ran although the lease was held")
			}
			if got := readFile(t, filepath.Join(dir, "job.lease")); got != "other 1" {
				t.Fatalf("the other holder's lease was touched: %q", got)
			}
		})
	}
}

// trapScript traps sig, reports it and exits 3; it signals readiness by
// creating the file ready.
func trapScript(ready, trap string) string {
	return fmt.Sprintf(`trap '%s' TERM; touch %s; while :; do sleep 0.02; done`, trap, ready)
}

func TestSignalsAreForwardedAndLeaseReleasedAfterChildExits(t *testing.T) {
	for _, m := range modes {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1} {
			t.Run(m.name+"/"+sig.String(), func(t *testing.T) {
				dir := t.TempDir()
				ready := filepath.Join(dir, "ready")
				script := fmt.Sprintf(`trap 'echo got %d; exit 3' %d; touch %s; while :; do sleep 0.02; done`, sig, sig, ready)
				s := startSup(t, testEnv(dir, "T_ANCHORED="+m.anchored), "sh", "-c", script)
				waitFile(t, ready)
				s.cmd.Process.Signal(sig)
				if have := s.wait(t); have != 3 {
					t.Fatalf("want the child's 3, have %d\n%s", have, &s.stderr)
				}
				contains(t, s.stdout.String(), fmt.Sprintf("got %d", sig))
				if _, err := os.Stat(filepath.Join(dir, "job.lease")); !os.IsNotExist(err) {
					t.Fatal("lease not released after the child exited")
				}
			})
		}
	}
}

func TestLostLeaseStopsTheChild(t *testing.T) {
	for _, tc := range []struct {
		name, trap string
		wantChild  string
	}{
		{"child obeys SIGTERM", "exit 9", "9 lost=true"},
		{"child ignores SIGTERM", "", "137 lost=true"},
	} {
		for _, m := range modes {
			t.Run(tc.name+"/"+m.name, func(t *testing.T) {
				dir := t.TempDir()
				ready := filepath.Join(dir, "ready")
				s := startSup(t, testEnv(dir, "T_ANCHORED="+m.anchored, "T_PERIOD=50ms", "T_GRACE=300ms"),
					"sh", "-c", trapScript(ready, tc.trap))
				waitFile(t, ready)
				os.WriteFile(filepath.Join(dir, "job.lease"), []byte("thief 1"), 0o644)
				if have := s.wait(t); have != 76 {
					t.Fatalf("want the lease-lost code 76, have %d\n%s", have, &s.stderr)
				}
				if got := readFile(t, filepath.Join(dir, "job.lease.result")); got != tc.wantChild {
					t.Fatalf("want Finish to see %q, have %q", tc.wantChild, got)
				}
				if got := readFile(t, filepath.Join(dir, "job.lease")); got != "thief 1" {
					t.Fatalf("the new holder's lease was touched: %q", got)
				}
			})
		}
	}
}

func TestWaiterAcquiresWhenTheHolderExits(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			env := []string{"T_ANCHORED=" + m.anchored}
			ready := filepath.Join(dir, "ready")
			holder := startSup(t, testEnv(dir, env...), "sh", "-c", "touch "+ready+"; sleep 0.3")
			waitFile(t, ready)
			waiter := startSup(t, testEnv(dir, append(env, "T_WAIT=10s")...), "sh", "-c", "echo waited")
			if have := holder.wait(t); have != 0 {
				t.Fatalf("holder: want 0, have %d\n%s", have, &holder.stderr)
			}
			if have := waiter.wait(t); have != 0 {
				t.Fatalf("waiter: want 0, have %d\n%s", have, &waiter.stderr)
			}
			contains(t, waiter.stdout.String(), "waited")
		})
	}
}

func TestWaiterGivesUpAfterWait(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "job.lease"), []byte("other 1"), 0o644)
	start := time.Now()
	have, s := runSup(t, testEnv(dir, "T_WAIT=200ms"), "true")
	if have != 75 {
		t.Fatalf("want 75, have %d\n%s", have, &s.stderr)
	}
	if el := time.Since(start); el < 200*time.Millisecond {
		t.Fatalf("gave up after %v, before the 200ms wait", el)
	}
	contains(t, s.stderr.String(), "not acquired within --wait")
}

func TestSignalWhileWaitingAbortsCleanly(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "job.lease"), []byte("other 1"), 0o644)
			ran := filepath.Join(dir, "ran")
			s := startSup(t, testEnv(dir, "T_WAIT=30s", "T_ANCHORED=1"), "touch", ran)
			// Once it logs that it waits, its handlers are installed.
			waitFor(t, "the supervisor to wait", func() bool { return strings.Contains(s.stderrText(), "lease held; waiting") })
			s.cmd.Process.Signal(sig)
			if have, want := s.wait(t), 128+int(sig); have != want {
				t.Fatalf("want %d, have %d\n%s", want, have, &s.stderr)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 || readFile(t, filepath.Join(dir, "job.lease")) != "other 1" {
				t.Fatalf("want only the other holder's lease left, have %v", entries)
			}
		})
	}
}

func TestChildSeesTheEnvironmentContractAndNoStrayDescriptors(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			have, s := runSup(t, testEnv(dir, "T_ANCHORED="+m.anchored, "T_CHILD_REPORT=1"), os.Args[0])
			if have != 0 {
				t.Fatalf("want 0, have %d\n%s", have, &s.stderr)
			}
			out := s.stdout.String()
			if m.anchored == "0" {
				contains(t, out, "kind=testfile key=job fd=3 extra=yes gate=\n")
			} else {
				contains(t, out, "kind=testfile key=job fd= extra= gate=\n")
			}
			want := map[string]bool{"0": true, "1": true, "2": true}
			if m.anchored == "0" {
				want["3"] = true
			}
			for _, fd := range inheritedFDs(3) {
				want[fd] = true
			}
			for _, line := range strings.Split(out, "\n") {
				if fd, ok := strings.CutPrefix(line, "fd "); ok && !want[fd] {
					t.Errorf("descriptor %s leaked into the child\n%s", fd, out)
				}
			}
		})
	}
}

// inheritedFDs lists this process's descriptors from min up without
// FD_CLOEXEC. In the test process, those (above 2) came from whatever
// started the test and pass to every exec; in a freshly exec'd child they
// are exactly what it inherited (Go opens its own with FD_CLOEXEC).
func inheritedFDs(min int) []string {
	entries, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, e := range entries {
		fd, _ := strconv.Atoi(e.Name())
		if fd < min {
			continue
		}
		if flags, err := fcntlGetFD(fd); err == nil && flags&syscall.FD_CLOEXEC == 0 {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestSubreaperReapsOrphans(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	// The grandchild is orphaned at once and dies while the child lives.
	s := startSup(t, testEnv(dir, "T_SUBREAPER=1"), "sh", "-c", "(sleep 0.05 &); touch "+ready+"; sleep 0.6; exit 5")
	waitFile(t, ready)
	time.Sleep(300 * time.Millisecond)
	if z := zombiesOf(s.cmd.Process.Pid); len(z) > 0 {
		t.Errorf("want orphans reaped, have zombies %v", z)
	}
	if have := s.wait(t); have != 5 {
		t.Fatalf("want the child's 5, have %d\n%s", have, &s.stderr)
	}
}

// zombiesOf lists zombie processes whose parent is ppid.
func zombiesOf(ppid int) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		_, after, ok := strings.Cut(string(b), ") ")
		if !ok {
			continue
		}
		f := strings.Fields(after)
		if len(f) > 2 && f[0] == "Z" && f[1] == strconv.Itoa(ppid) {
			out = append(out, p)
		}
	}
	return out
}

// A kind whose TTL the timing cannot keep (here: a 1 s TTL with the default
// 10 s kill grace) is refused before the command runs, and the lease it
// took is given back.
func TestUnworkableTimingNeverRunsTheCommand(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			ran := filepath.Join(dir, "ran")
			have, s := runSup(t, testEnv(dir, "T_ANCHORED="+m.anchored, "T_TTL=1s"), "touch", ran)
			if have != 70 || !strings.Contains(s.stderr.String(), "kill grace 10s must be shorter than the TTL 1s") {
				t.Fatalf("want 70 naming the timing rule, have %d\n%s", have, &s.stderr)
			}
			if exists(ran) {
				t.Fatal("the command ran although its timing was refused")
			}
			if exists(filepath.Join(dir, "job.lease")) {
				t.Fatal("the lease was not given back")
			}
		})
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
