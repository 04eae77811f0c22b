package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/procstat"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// readPID reads a pid a test child wrote.
func readPID(t *testing.T, path string) int { return testutil.ReadPID(t, path, 10*time.Second) }

// alive reports whether pid runs (a zombie does not count).
func alive(pid int) bool { return procstat.Running(pid) }

// The job is the child's process group: when leasewrap is told to stop,
// the whole pipeline stops, and the lease is settled only after that.
func TestSIGTERMStopsThePipelineBeforeSettling(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			pidf := filepath.Join(dir, "sleep.pid")
			script := fmt.Sprintf(`sleep 100 | cat & echo $! > %s.tmp; mv %s.tmp %s; wait`, pidf, pidf, pidf)
			s := startSup(t, testEnv(dir, "T_ANCHORED="+m.anchored, "T_GRACE=2s"), "sh", "-c", script)
			pid := readPID(t, pidf) // the pipeline's last member (cat)
			s.cmd.Process.Signal(syscall.SIGTERM)
			if have := s.wait(t); have != 143 {
				t.Fatalf("want 143, have %d\n%s", have, &s.stderr)
			}
			if alive(pid) {
				t.Fatalf("pipeline member %d still runs after leasewrap settled the lease", pid)
			}
			if _, err := os.Stat(filepath.Join(dir, "job.lease")); !os.IsNotExist(err) {
				t.Fatal("lease not released")
			}
		})
	}
}

// A grandchild that ignores SIGTERM is killed after the grace once the
// lease is lost, even though the direct child died at once.
func TestLostLeaseKillsAGrandchildThatIgnoresTERM(t *testing.T) {
	dir := t.TempDir()
	pidf, ready := filepath.Join(dir, "gc.pid"), filepath.Join(dir, "ready")
	script := fmt.Sprintf(`sh -c 'trap "" TERM; echo $$ > %s.tmp; mv %s.tmp %s; while :; do sleep 0.05; done' & touch %s; wait`, pidf, pidf, pidf, ready)
	s := startSup(t, testEnv(dir, "T_ANCHORED=1", "T_PERIOD=50ms", "T_GRACE=300ms"), "sh", "-c", script)
	waitFile(t, ready)
	gc := readPID(t, pidf)
	os.WriteFile(filepath.Join(dir, "job.lease"), []byte("thief 1"), 0o644)
	if have := s.wait(t); have != 76 {
		t.Fatalf("want 76, have %d\n%s", have, &s.stderr)
	}
	if alive(gc) {
		t.Fatalf("grandchild %d ignoring TERM still runs after leasewrap exited", gc)
	}
}

// A child that exits normally leaves a straggler: it is stopped (TERM,
// then KILL after the grace), named in the log, and leasewrap exits with
// the child's own code. With LeaveStrays it is left alone.
func TestStragglersOfAFinishedChild(t *testing.T) {
	for _, leave := range []bool{false, true} {
		t.Run(fmt.Sprintf("leave=%v", leave), func(t *testing.T) {
			dir := t.TempDir()
			pidf := filepath.Join(dir, "stray.pid")
			script := fmt.Sprintf(`sh -c 'trap "" TERM; echo $$ > %s.tmp; mv %s.tmp %s; exec sleep 100' >/dev/null 2>&1 & while [ ! -s %s ]; do sleep 0.01; done; exit 3`, pidf, pidf, pidf, pidf)
			env := testEnv(dir, "T_GRACE=300ms")
			if leave {
				env = append(env, "T_LEAVE_STRAYS=1")
			}
			have, s := runSup(t, env, "sh", "-c", script)
			if have != 3 {
				t.Fatalf("want the child's 3, have %d\n%s", have, &s.stderr)
			}
			stray := readPID(t, pidf)
			if leave {
				if !alive(stray) {
					t.Fatalf("with LeaveStrays the stray %d was stopped", stray)
				}
				unix.Kill(stray, unix.SIGKILL)
				return
			}
			if alive(stray) {
				t.Fatalf("stray %d still runs after leasewrap exited", stray)
			}
			contains(t, s.stderrText(), "processes of its job still running")
			contains(t, s.stderrText(), strconv.Itoa(stray))
		})
	}
}

// Without being a subreaper the supervisor waits for its own child only: a
// program that embeds it keeps its other children's statuses.
func TestReaperLeavesOtherChildrenAlone(t *testing.T) {
	dir := t.TempDir()
	have, s := runSup(t, testEnv(dir, "T_OTHER_CHILD=1"), "sh", "-c", "sleep 0.3")
	if have != 0 {
		t.Fatalf("want 0, have %d\n%s", have, &s.stderr)
	}
	contains(t, s.stderrText(), "other child status: 7")
}

// Signals that matter only to a running child (USR1, WINCH) received while
// waiting for the lease are dropped, not delivered to the child later.
func TestChildOnlySignalsWhileWaitingAreDropped(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "job.lease"), []byte("other 1"), 0o644)
	got := filepath.Join(dir, "got")
	script := fmt.Sprintf(`trap 'echo usr1 >> %s' USR1; sleep 0.5; echo done`, got)
	s := startSup(t, testEnv(dir, "T_WAIT=30s"), "sh", "-c", script)
	waitFor(t, "the supervisor to wait", func() bool { return strings.Contains(s.stderrText(), "lease held; waiting") })
	s.cmd.Process.Signal(syscall.SIGUSR1)
	s.cmd.Process.Signal(syscall.SIGWINCH)
	time.Sleep(100 * time.Millisecond)
	os.Remove(filepath.Join(dir, "job.lease"))
	if have := s.wait(t); have != 0 {
		t.Fatalf("want 0, have %d\n%s", have, &s.stderr)
	}
	contains(t, s.stdout.String(), "done")
	if _, err := os.Stat(got); err == nil {
		t.Fatalf("the child got a USR1 sent while leasewrap was waiting")
	}
}

// The fence is a timer of its own: a renewal that blocks forever (and
// ignores its context) does not keep the job running past the TTL. The
// bound is the configured TTL itself, a safety property.
func TestBlockedRenewalStillFences(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			ttl := 4 * time.Second
			ready := filepath.Join(dir, "ready")
			start := time.Now()
			s := startSup(t, testEnv(dir, "T_ANCHORED="+m.anchored, "T_TTL="+ttl.String(),
				"T_PERIOD=200ms", "T_GRACE=300ms", "T_BLOCK_RENEW=1"), "sh", "-c", "touch "+ready+"; trap '' TERM; sleep 60")
			waitFile(t, ready)
			have := s.wait(t) // returns once the job's group is empty
			el := time.Since(start)
			if have != 76 {
				t.Fatalf("want 76, have %d\n%s", have, &s.stderr)
			}
			if el >= ttl {
				t.Fatalf("job still ran %v after start, past the TTL %v\n%s", el, ttl, &s.stderr)
			}
			contains(t, s.stderrText(), "fencing")
		})
	}
}

// A child that exited while leasewrap was frozen past the fencing deadline
// is settled normally if the lease is still ours, and reported lost (76)
// only if it is not.
func TestFrozenPastTheFenceAfterTheChildExited(t *testing.T) {
	for _, stolen := range []bool{false, true} {
		t.Run(fmt.Sprintf("stolen=%v", stolen), func(t *testing.T) {
			dir := t.TempDir()
			ready := filepath.Join(dir, "ready")
			s := startSup(t, testEnv(dir, "T_ANCHORED=1", "T_TTL=3s", "T_PERIOD=200ms", "T_GRACE=200ms"),
				"sh", "-c", "touch "+ready+"; sleep 0.3")
			waitFile(t, ready)
			s.cmd.Process.Signal(syscall.SIGSTOP)
			time.Sleep(2500 * time.Millisecond) // past the fence (3s - 0.2s - 1s), child gone
			if stolen {
				os.WriteFile(filepath.Join(dir, "job.lease"), []byte("thief 1"), 0o644)
			}
			s.cmd.Process.Signal(syscall.SIGCONT)
			have := s.wait(t)
			want, result := 0, "0 lost=false pastfence"
			if stolen {
				want = 76
			}
			if have != want {
				t.Fatalf("want %d, have %d\n%s", want, have, &s.stderr)
			}
			if got := readFile(t, filepath.Join(dir, "job.lease.result")); got != result {
				t.Fatalf("want Finish to see %q, have %q", result, got)
			}
		})
	}
}

// An ephemeral lease dies with leasewrap, so the job must too: SIGKILL of
// leasewrap ends the child (Pdeathsig) and the rest of its group (guard).
func TestEphemeralJobDiesWithLeasewrap(t *testing.T) {
	dir := t.TempDir()
	pidf := filepath.Join(dir, "pids")
	script := fmt.Sprintf(`sleep 100 & echo "$$ $!" > %s.tmp; mv %s.tmp %s; wait`, pidf, pidf, pidf)
	s := startSup(t, testEnv(dir, "T_EPHEMERAL=1", "T_TTL=30s"), "sh", "-c", script)
	waitFile(t, pidf)
	var child, gc int
	waitFor(t, "pids", func() bool {
		n, _ := fmt.Sscan(readFile(t, pidf), &child, &gc)
		return n == 2
	})
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
	waitFor(t, "the job to die with leasewrap", func() bool { return !alive(child) && !alive(gc) })
}
