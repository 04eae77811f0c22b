package main

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/kube/internal/kubetest"
)

// startJob wraps `elector job` (working for an hour, logging to a file) on
// the Lease name as the runner, waits until it runs and returns the
// wrapper, the log's path and the job.
func startJob(t *testing.T, b bins, s *kubetest.Server, name string, flags ...string) (*kproc, string, *hjob) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "jobs")
	w := wrap(t, b, s, kubetest.Runner, name, flags, envJob(s, log, time.Hour, ""), b.elector, "job")
	deadline := time.Now().Add(testutil.Scale(time.Minute))
	for {
		if h := readJobLog(t, log); len(h.jobs) > 0 {
			return w, log, h.jobs[0]
		}
		if !w.Running() || time.Now().After(deadline) {
			t.Fatalf("the job did not start (leasewrap-kube %v, code %d):\n%s", w.Running(), w.Code(), w.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// jobEnd is the job's end as it logged it (0: not logged).
func jobEnd(t *testing.T, log string) *hjob {
	t.Helper()
	h := readJobLog(t, log)
	if len(h.jobs) == 0 {
		t.Fatal("no job in the log")
	}
	return h.jobs[0]
}

// TestKubeFaultAPIServerPaused: the API server is paused (SIGSTOP) under a
// holder; its job must be stopped before any rival could judge the lease
// expired: before renewTime + leaseDurationSeconds of the last renewal
// that reached the server (a client-go observer saw that version at a
// later time still; leasewrap's own rule adds the skew margin).
func TestKubeFaultAPIServerPaused(t *testing.T) {
	s := kubetest.Start(t)
	b := build(t)
	lw := watchLease(t, s, "paused")
	w, log, _ := startJob(t, b, s, "paused", "--ttl", "6s", "--kill-grace", "1s", "--renew-every", "1s", "--identity", "lw-paused")
	time.Sleep(3 * time.Second) // a few renewals
	s.Pause()
	t.Cleanup(s.Resume)
	paused := time.Now()
	code := w.wait(t, time.Minute)
	s.Resume()
	if code != 76 {
		t.Fatalf("leasewrap-kube under a paused API server: want 76, have %d:\n%s", code, w.output())
	}
	j := jobEnd(t, log)
	if j.end == 0 {
		t.Fatalf("the job did not log its end (not stopped by SIGTERM?)")
	}
	if err := s.WaitReady(kubetest.ReadyTimeout); err != nil {
		t.Fatal(err)
	}
	// The admin's watch has delivered what the server kept once it has
	// seen the Lease's current renewTime.
	if cur, err := s.Admin.CoordinationV1().Leases(kubetest.Namespace).Get(context.Background(), "paused", metav1.GetOptions{}); err == nil &&
		cur.Spec.RenewTime != nil && cur.Spec.HolderIdentity != nil && *cur.Spec.HolderIdentity == "lw-paused" {
		testutil.WaitFor(t, "the admin's watch to see the last renewal the server kept", 30*time.Second, func() bool {
			r, _ := lw.lastRenewal("lw-paused")
			return !r.Before(cur.Spec.RenewTime.Time)
		})
	}
	renewed, dur := lw.lastRenewal("lw-paused")
	if renewed.IsZero() {
		t.Fatal("no renewal of lw-paused seen")
	}
	expiry := renewed.Add(time.Duration(dur) * time.Second)
	end := time.Unix(0, j.endW)
	if !end.Before(expiry) {
		t.Fatalf("the job ended at %v, not before the lease could be judged expired (last renewTime %v + %ds = %v)",
			end.Format(time.StampMicro), renewed.Format(time.StampMicro), dur, expiry.Format(time.StampMicro))
	}
	t.Logf("paused %v after the job started; the job ended %v after the pause, %v before the earliest expiry (renewTime %s + %ds)",
		paused.Sub(time.Unix(0, j.startW)).Round(time.Millisecond), end.Sub(paused).Round(time.Millisecond),
		expiry.Sub(end).Round(time.Millisecond), renewed.Format(time.StampMicro), dur)
}

// TestKubeFaultAPIServerRestart: the API server is killed and started
// again (same port, same etcd) well within the fence: the job keeps
// running, and leasewrap renews on the new server.
func TestKubeFaultAPIServerRestart(t *testing.T) {
	s := kubetest.Start(t)
	b := build(t)
	lw := watchLease(t, s, "restart")
	// TTL 120 s: the fence falls about 109 s after the last renewal, far
	// beyond a restart even on a loaded machine.
	w, log, _ := startJob(t, b, s, "restart", "--ttl", "120s", "--renew-every", "2s", "--identity", "lw-restart")
	gone := s.Restart(t)
	back := time.Now()
	deadline := time.Now().Add(testutil.Scale(time.Minute))
	for {
		if r, _ := lw.lastRenewal("lw-restart"); r.After(back) {
			break
		}
		if time.Now().After(deadline) {
			r, _ := lw.lastRenewal("lw-restart")
			t.Fatalf("no renewal seen within a minute of the restart (back at %s; last renewTime seen %s, %d versions; now %+v); leasewrap-kube (running %v):\n%s",
				back.Format(time.StampMicro), r.Format(time.StampMicro), lw.count(), getLease(t, s, "restart").Spec, w.Running(), w.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !w.Running() {
		t.Fatalf("leasewrap-kube ended (%d) over the restart:\n%s", w.Code(), w.output())
	}
	if j := jobEnd(t, log); j.end != 0 {
		t.Fatalf("the job ended over the restart")
	}
	if h := holderOf(getLease(t, s, "restart")); h != "lw-restart" {
		t.Fatalf("holder after the restart: want lw-restart, have %q", h)
	}
	t.Logf("the API server was away %v; the job kept running and the lease was renewed after it came back", gone.Round(time.Millisecond))
	w.Cmd.Process.Signal(syscall.SIGTERM)
	if code := w.wait(t, time.Minute); code == 76 {
		t.Fatalf("leasewrap-kube reported loss after the restart:\n%s", w.output())
	}
}

// TestKubeFaultRoleRemoved: the Role granting the runner its verbs is
// deleted mid-run: the next renewal is forbidden (403), which is loss:
// the job is stopped and leasewrap exits 76.
func TestKubeFaultRoleRemoved(t *testing.T) {
	s := kubetest.Start(t)
	b := build(t)
	w, log, _ := startJob(t, b, s, "rbac", "--ttl", "6s", "--kill-grace", "1s", "--renew-every", "1s")
	s.RemoveRole(t)
	if code := w.wait(t, time.Minute); code != 76 {
		t.Fatalf("leasewrap-kube after its Role was removed: want 76, have %d:\n%s", code, w.output())
	}
	if j := jobEnd(t, log); j.end == 0 {
		t.Fatalf("the job did not log its end")
	}
}

// TestKubeFaults: faults that need no server of their own, on one server.
func TestKubeFaults(t *testing.T) {
	s := kubetest.Start(t)
	b := build(t)
	leases := s.Admin.CoordinationV1().Leases(kubetest.Namespace)

	// Deleted, or taken by another holder: the watch reports it and the
	// job is stopped at once (the fence is ~50 s away with TTL 60 s).
	for _, c := range []struct {
		name  string
		fault func(t *testing.T, lease string)
	}{
		{"LeaseDeleted", func(t *testing.T, lease string) {
			if err := leases.Delete(context.Background(), lease, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
		{"HolderOverwritten", func(t *testing.T, lease string) {
			if err := overwriteHolder(s, lease, "intruder", 15); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			lease := "fault-" + map[string]string{"LeaseDeleted": "deleted", "HolderOverwritten": "overwritten"}[c.name]
			w, log, _ := startJob(t, b, s, lease, "--ttl", "60s")
			at := time.Now()
			c.fault(t, lease)
			if code := w.wait(t, time.Minute); code != 76 {
				t.Fatalf("want 76, have %d:\n%s", code, w.output())
			}
			took := w.Ended().Sub(at)
			j := jobEnd(t, log)
			if j.end == 0 {
				t.Fatalf("the job did not log its end")
			}
			if took > 20*time.Second {
				t.Errorf("leasewrap-kube exited %v after the fault: not from its watch (the fence is ~50 s away)", took)
			}
			t.Logf("job stopped %v and leasewrap-kube exited 76 %v after the fault", time.Unix(0, j.endW).Sub(at).Round(time.Millisecond), took.Round(time.Millisecond))
		})
	}

	t.Run("WrapperSIGKILL", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "job")
		w := wrap(t, b, s, kubetest.Runner, "fault-sigkill", []string{"--ttl", "60s"}, nil, shJob(file, "exec sleep 600")...)
		_, pid := readShJob(t, file, time.Minute)
		w.Cmd.Process.Kill() // leasewrap only, not its group
		took := waitGone(t, pid, 5*time.Second)
		t.Logf("the job was gone %v after leasewrap-kube's SIGKILL", took.Round(time.Millisecond))
	})

	t.Run("HolderCrashedAnHourAgo", func(t *testing.T) {
		// client-go's rule alone would make a fresh process wait a full
		// lease duration; renewTime + duration + skew lies an hour back,
		// so a single try takes it.
		hourAgo := metav1.NewMicroTime(time.Now().Add(-time.Hour))
		holder, dur, tr := "crashed-pod", int32(15), int32(7)
		if _, err := leases.Create(context.Background(), &coordv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "fault-crashed"},
			Spec:       coordv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, AcquireTime: &hourAgo, RenewTime: &hourAgo, LeaseTransitions: &tr},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "job")
		w := wrap(t, b, s, kubetest.Runner, "fault-crashed", nil, nil, shJob(file, "true")...)
		if code := w.wait(t, time.Minute); code != 0 {
			t.Fatalf("try-once on a lease whose holder crashed an hour ago: want 0, have %d:\n%s", code, w.output())
		}
		if fence, _ := readShJob(t, file, time.Second); fence != 8 {
			t.Errorf("LEASEWRAP_FENCE: want 8 (transitions 7 + 1), have %d", fence)
		}
		if l := getLease(t, s, "fault-crashed"); holderOf(l) != "" || transitionsOf(l) != 8 {
			t.Errorf("after the run: want released with transitions 8, have %+v", l.Spec)
		}
	})
}
