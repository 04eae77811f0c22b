package test

import (
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
)

// Each fault test has a holder running a long job and a waiter queued on
// the same NAME; after the fault the waiter's job runs, and the history
// shows no overlap and a higher fence.

// startHolder starts a wrapper whose job runs for sleep and waits until
// that job logged its start.
func startHolder(t *testing.T, hist, dsn, name string, sleep time.Duration, extraEnv ...string) (*wrapper, *job) {
	t.Helper()
	before := len(readHistory(t, hist).jobs)
	w := startLW(t, jobEnv(hist, sleep, extraEnv...), runArgs(name, dsn, append(fast, "--wait", "60s")...)...)
	jobs := waitJobs(t, hist, before+1, 30*time.Second, w)
	return w, jobs[len(jobs)-1]
}

// startWaiter starts a wrapper that waits up to two minutes for NAME and
// runs a short job.
func startWaiter(t *testing.T, hist, dsn, name string) *wrapper {
	t.Helper()
	return startLW(t, jobEnv(hist, 10*time.Millisecond), runArgs(name, dsn, append(fast, "--wait", "2m")...)...)
}

func TestFaultHolderKilled(t *testing.T) {
	srv := pgtest.Start(t)
	hist := tmp(t, "history")
	holder, hj := startHolder(t, hist, srv.DSN(), "kill", time.Minute)
	waiter := startWaiter(t, hist, srv.DSN(), "kill")
	killed := monoNow()
	holder.Cmd.Process.Kill() // the wrapper alone: its job must die with it
	gone := map[int]int64{hj.pid: watchGone(t, hj.pid, pgtest.Scale(10*time.Second))}
	if code := waiter.wait(t, pgtest.Scale(2*time.Minute)); code != 0 {
		t.Fatalf("waiter: want 0, have %d:\n%s", code, waiter.out.String())
	}
	h := readHistory(t, hist)
	h.check(t, 2, -1, gone)
	if len(h.jobs) == 2 {
		t.Logf("takeover %v after SIGKILL of the holder (TTL 4s)", time.Duration(h.jobs[1].start-killed))
	}
}

func TestFaultServerStopped(t *testing.T) {
	srv := pgtest.Start(t)
	hist := tmp(t, "history")
	holder, hj := startHolder(t, hist, srv.DSN(), "srvstop", 3*time.Second)
	waiter := startWaiter(t, hist, srv.DSN(), "srvstop")
	// Longer than the TTL: new connections hang, open sessions still work.
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	code := holder.wait(t, pgtest.Scale(time.Minute))
	if code != 0 && code != 76 {
		t.Errorf("holder: want 0 (kept) or 76 (lost), have %d:\n%s", code, holder.out.String())
	}
	gone := map[int]int64{}
	if code != 0 {
		gone[hj.pid] = watchGone(t, hj.pid, pgtest.Scale(10*time.Second))
	}
	if code := waiter.wait(t, pgtest.Scale(2*time.Minute)); code != 0 {
		t.Fatalf("waiter: want 0, have %d:\n%s", code, waiter.out.String())
	}
	readHistory(t, hist).check(t, 2, -1, gone)
	t.Logf("holder exited %d", code)
}

func TestFaultBackendStopped(t *testing.T) {
	srv := pgtest.Start(t)
	hist := tmp(t, "history")
	holder, hj := startHolder(t, hist, srv.DSN(), "bestop", 8*time.Second)
	pids := srv.BackendPIDs(t, "") // the holder's alone: no one else is connected yet
	if len(pids) == 0 {
		t.Fatal("the holder has no backend")
	}
	waiter := startWaiter(t, hist, srv.DSN(), "bestop")
	for _, pid := range pids {
		if err := srv.StopBackend(pid); err != nil {
			t.Fatal(err)
		}
	}
	// The holder's renewals hang; it must stop its job before anyone else
	// may start one, or reconnect and keep the lease.
	code := holder.wait(t, pgtest.Scale(time.Minute))
	for _, pid := range pids {
		srv.ContinueBackend(pid)
	}
	gone := map[int]int64{}
	if code != 0 {
		gone[hj.pid] = watchGone(t, hj.pid, pgtest.Scale(10*time.Second))
	}
	if code != 0 && code != 76 {
		t.Errorf("holder: want 0 or 76, have %d:\n%s", code, holder.out.String())
	}
	if code := waiter.wait(t, pgtest.Scale(2*time.Minute)); code != 0 {
		t.Fatalf("waiter: want 0, have %d:\n%s", code, waiter.out.String())
	}
	readHistory(t, hist).check(t, 2, -1, gone)
	t.Logf("holder with its backend stopped exited %d:\n%s", code, holder.out.String())
}

// A terminated connection is a network error: the holder reconnects and
// keeps its lease, so its job runs to its end and exits 0.
func TestFaultBackendTerminated(t *testing.T) {
	srv := pgtest.Start(t)
	hist := tmp(t, "history")
	holder, _ := startHolder(t, hist, srv.DSN(), "term", 4*time.Second)
	pids := srv.BackendPIDs(t, "")
	if len(pids) == 0 {
		t.Fatal("the holder has no backend")
	}
	for _, pid := range pids {
		srv.Terminate(t, pid)
	}
	testutil.WaitFor(t, "the holder to reconnect", pgtest.Scale(20*time.Second), func() bool {
		now := srv.BackendPIDs(t, "")
		return len(now) > 0 && now[0] != pids[0]
	})
	waiter := startWaiter(t, hist, srv.DSN(), "term")
	if code := holder.wait(t, pgtest.Scale(time.Minute)); code != 0 {
		t.Errorf("holder after pg_terminate_backend: want 0 (reconnected, lease kept), have %d:\n%s", code, holder.out.String())
	}
	if code := waiter.wait(t, pgtest.Scale(2*time.Minute)); code != 0 {
		t.Fatalf("waiter: want 0, have %d:\n%s", code, waiter.out.String())
	}
	readHistory(t, hist).check(t, 2, -1, nil)
}

// A holder cut off by a paused proxy, whose job ignores SIGTERM: the job
// is SIGKILLed after the kill grace and gone before the waiter's job
// starts.
func TestFaultPartitionStubbornJob(t *testing.T) {
	srv := pgtest.Start(t)
	proxy := pgtest.StartProxy(t, srv.Addr())
	viaProxy := "postgres://postgres:" + pgtest.Password + "@" + proxy.Addr() + "/postgres?sslmode=disable&connect_timeout=2"
	hist := tmp(t, "history")
	holder, hj := startHolder(t, hist, viaProxy, "part", time.Minute, envJobStubborn+"=1")
	waiter := startWaiter(t, hist, srv.DSN(), "part")
	proxy.Pause()
	gone := map[int]int64{hj.pid: watchGone(t, hj.pid, pgtest.Scale(30*time.Second))}
	if code := holder.wait(t, pgtest.Scale(time.Minute)); code != 76 {
		t.Errorf("partitioned holder: want 76, have %d:\n%s", code, holder.out.String())
	}
	if code := waiter.wait(t, pgtest.Scale(2*time.Minute)); code != 0 {
		t.Fatalf("waiter: want 0, have %d:\n%s", code, waiter.out.String())
	}
	h := readHistory(t, hist)
	h.check(t, 2, -1, gone)
	if len(h.jobs) == 2 {
		t.Logf("the stubborn job was gone %v before the waiter's job started", time.Duration(h.jobs[1].start-gone[hj.pid]))
	}
}
