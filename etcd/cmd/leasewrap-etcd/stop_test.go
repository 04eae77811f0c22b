package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// TestLockStalledHolderNeverGetsASecondGrace (issue 23.0): a lock holder
// whose leasewrap is stopped (SIGSTOP) and continued past its fence, but
// before its lease expires, must have its TERM-ignoring job dead by the
// kill deadline fixed from its last renewal (its start + TTL - margin),
// not a fresh --kill-grace after it resumes; the queued waiter's job,
// which starts once the lease expired, must never overlap it (checked on
// the history both jobs write). TTL 8 s, grace 3 s, margin 1 s, renewals
// every 0.5 s: the last renewal is at most ~0.5 s before the stop, the
// fence 4 s after it, the kill deadline 7 s, the expiry 8 s; the holder
// resumes 6.5 s after the stop. A second grace would SIGKILL it 9.5 s or
// more after its last renewal, well after the waiter's job started.
func TestLockStalledHolderNeverGetsASecondGrace(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	hist := filepath.Join(t.TempDir(), "history")
	timing := []string{"--ttl", "8s", "--kill-grace", "3s", "--renew-every", "500ms"}
	holder := startLW(t, nil, lockArgs("stall", c.Endpoints(), timing, "sh", "-c", testutil.AliveJob(hist, "A", true, -1))...)
	waitFile(t, hist, 20*time.Second)
	time.Sleep(time.Second) // renewals
	holder.Cmd.Process.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	defer holder.Cmd.Process.Signal(syscall.SIGCONT)
	waiter := startLW(t, nil, lockArgs("stall", c.Endpoints(), append(timing, "--wait", "60s"), "sh", "-c", testutil.AliveJob(hist, "B", false, 25))...)
	time.Sleep(time.Until(stopped.Add(6500 * time.Millisecond)))
	holder.Cmd.Process.Signal(syscall.SIGCONT)
	if code := holder.wait(t, 30*time.Second); code != 76 || !strings.Contains(holder.out.String(), "stalled") {
		t.Fatalf("holder: want 76 with the stall named, have %d:\n%s", code, holder.out.String())
	}
	if code := waiter.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("waiter: want 0, have %d:\n%s", code, waiter.out.String())
	}
	testutil.NoOverlap(t, hist, "A", "B")
}

// TestTimeoutOnEtcd (issue 26): --timeout stops the job and settles the
// lease (the lock released at once, not left to expire), exit 124; a
// timed-out once run is not published (a retry runs) unless
// --publish-failures, then with its code (a job that exits 0 on the stop
// signal: 124), replayed by the retry.
func TestTimeoutOnEtcd(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	long := []string{"sh", "-c", "sleep 60"}
	t.Run("lock", func(t *testing.T) {
		code, out := runLW(t, nil, lockArgs("limited", c.Endpoints(), []string{"--timeout", "500ms"}, long...)...)
		if code != 124 || !strings.Contains(out, "--timeout") {
			t.Fatalf("want 124 naming --timeout, have %d:\n%s", code, out)
		}
		if n := countKeys(t, cli, "limited/"); n != 0 {
			t.Fatalf("want the lock released, have %d keys", n)
		}
	})
	t.Run("once", func(t *testing.T) {
		marker := tmp(t, "ran")
		quits := []string{"--timeout", "500ms", "--stop-signal", "QUIT"}
		job := []string{"sh", "-c", fmt.Sprintf(`echo x >> %s; trap "exit 0" QUIT; while :; do sleep 0.02; done`, marker)}
		for _, tc := range []struct {
			flags []string
			retry int // the retry's exit: 0 it ran (true), 124 replayed
		}{
			{quits, 0},
			{append([]string{"--publish-failures"}, quits...), 124},
		} {
			key := fmt.Sprintf("limited-%d", len(tc.flags))
			if code, out := runLW(t, nil, onceArgs(key, c.Endpoints(), tc.flags, job...)...); code != 124 {
				t.Fatalf("%v: want 124, have %d:\n%s", tc.flags, code, out)
			}
			if code, out := runLW(t, nil, onceArgs(key, c.Endpoints(), nil, "true")...); code != tc.retry {
				t.Fatalf("%v: retry: want %d, have %d:\n%s", tc.flags, tc.retry, code, out)
			}
		}
	})
}
