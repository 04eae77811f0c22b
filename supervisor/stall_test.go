package supervisor

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// TestStalledSupervisorNeverGivesASecondGrace (issue 23.0): a supervisor
// stopped (SIGSTOP) right after a renewal and continued past its fencing
// deadline, before the lease expires for others, must have its job dead by
// the kill deadline fixed from that renewal (its start + TTL - margin),
// never "now + kill grace" from the moment it resumes. A TERM-ignoring
// job, a waiter for the same TTL lease, and the history both jobs write:
// the holder's job must be dead before the waiter's starts. TTL 6 s, kill
// grace 2 s, margin 1 s: fence at 3 s, kill deadline at 5 s, expiry at
// 6 s after the renewal. A second grace from the resume (4.5 s or 5.4 s)
// would run the holder's job past the waiter's start.
func TestStalledSupervisorNeverGivesASecondGrace(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stall time.Duration
	}{
		{"resumed-past-the-fence", 4500 * time.Millisecond},
		{"resumed-past-the-kill-deadline", 5400 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			hist := filepath.Join(dir, "history")
			common := []string{"T_TTL=6s", "T_GRACE=2s", "T_PERIOD=500ms", "T_EXPIRE=1", "T_EPHEMERAL=1"}
			holder := startSup(t, testEnv(dir, common...), "sh", "-c", testutil.AliveJob(hist, "A", true, -1))
			waitFor(t, "the holder's job", func() bool { _, err := os.Stat(hist); return err == nil })
			lp := filepath.Join(dir, "job.lease")
			fi, err := os.Stat(lp)
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "a renewal", func() bool {
				now, err := os.Stat(lp)
				return err == nil && now.ModTime().After(fi.ModTime())
			})
			holder.cmd.Process.Signal(syscall.SIGSTOP)
			stopped := time.Now()
			waiter := startSup(t, testEnv(dir, append(common, "T_WAIT=30s")...), "sh", "-c", testutil.AliveJob(hist, "B", false, 25))
			time.Sleep(time.Until(stopped.Add(tc.stall)))
			holder.cmd.Process.Signal(syscall.SIGCONT)
			if have := holder.wait(t); have != 76 {
				t.Fatalf("holder: want 76 (lost), have %d\n%s", have, holder.stderrText())
			}
			contains(t, holder.stderrText(), "stalled")
			if have := waiter.wait(t); have != 0 {
				t.Fatalf("waiter: want 0, have %d\n%s", have, waiter.stderrText())
			}
			testutil.NoOverlap(t, hist, "A", "B")
		})
	}
}

// TestTimeout (issue 26): --timeout stops the whole job as a lost lease
// does (the stop signal, SIGKILL after the kill grace), settles the lease
// normally (released: it is still ours) and ends TimedOut (124). A job
// that handles the stop signal chosen ends on it; a TERM-ignoring job is
// killed after the grace.
func TestTimeout(t *testing.T) {
	for _, tc := range []struct {
		name   string
		env    []string
		script string
		result string // the status Finish was given
		stdout string
	}{
		{"ignores-term", []string{"T_GRACE=200ms"}, `trap "" TERM; sleep 30 & wait; sleep 30`, "137 lost=false", ""},
		// Exits 0 on QUIT: still a failure for Finish (124), never a success.
		{"exits-on-quit", []string{"T_STOP_SIGNAL=3"}, `trap "echo got QUIT; exit 0" QUIT; trap "" TERM; while :; do sleep 0.02; done`, "124 lost=false", "got QUIT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			have, s := runSup(t, testEnv(dir, append(tc.env, "T_TIMEOUT=500ms")...), "sh", "-c", tc.script)
			if have != 124 {
				t.Fatalf("want 124, have %d\n%s", have, s.stderrText())
			}
			contains(t, s.stderrText(), "ran past --timeout")
			contains(t, s.stdout.String(), tc.stdout)
			if got := readFile(t, filepath.Join(dir, "job.lease.result")); got != tc.result {
				t.Fatalf("Finish: want %q, have %q", tc.result, got)
			}
			if _, err := os.Stat(filepath.Join(dir, "job.lease")); !os.IsNotExist(err) {
				t.Fatal("lease not released after the timeout")
			}
		})
	}
}
