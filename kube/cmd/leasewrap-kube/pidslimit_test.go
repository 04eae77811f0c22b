package main

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/internal/testutil/limittest"
	"github.com/leasewrap/leasewrap/kube/internal/kubetest"
)

// kubePidsMax is the limit of the cgroup leasewrap-kube, its guard and its
// job share (GOMAXPROCS=32 in the environment for a many-CPU host). The
// etcd module's TestLockRun*PidsLimit tests are the same for `lock run`;
// reliability/limits_test.go runs the local kinds.
const kubePidsMax = 120

// wrapInCgroup starts `leasewrap-kube kube run NAME` as the runner inside
// the cgroup at cg, with a text debug log, running a job that forks up to
// its limit for secs seconds, then exits 9.
func wrapInCgroup(t *testing.T, b bins, s *kubetest.Server, cg, name string, secs int) *kproc {
	t.Helper()
	p := &kproc{}
	args := []string{"kube", "run", name, "--kubeconfig", s.Kubeconfig(kubetest.Runner), "--namespace", kubetest.Namespace,
		"--log-level", "debug", "--job", "cgroup", "--ttl", "6s", "--renew-every", "1s", "--kill-grace", "1s",
		"--", "perl", "-e", limittest.ForkScript, strconv.Itoa(secs), "9", "0", "0"}
	cmd := exec.Command(b.lw, args...)
	cmd.Env = append(os.Environ(), "LEASEWRAP_LOG_FORMAT=text", "GOMAXPROCS=32")
	cmd.Stdout, cmd.Stderr = &p.out, &p.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p.Group = testutil.StartGroup(t, limittest.InCgroup(cmd, cg))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("leasewrap-kube's output:\n%s", p.output())
		}
	})
	return p
}

// TestKubeRunUnderAPidsLimit: one API server, three cases.
func TestKubeRunUnderAPidsLimit(t *testing.T) {
	s := kubetest.Start(t)
	b := build(t)
	leases := s.Admin.CoordinationV1().Leases(kubetest.Namespace)

	// The job forks to the limit for 12 s, then exits 9: the Lease's
	// renewTime moves while the limit is reached; leasewrap-kube settles
	// (the Lease released), exits 9; nothing is left in the cgroup.
	t.Run("Forking", func(t *testing.T) {
		cg := limittest.LimitCgroup(t, "pids", kubePidsMax)
		w := wrapInCgroup(t, b, s, cg, "pids-fork", 12)
		full := func() bool { return limittest.PidsFull(cg, kubePidsMax) }
		testutil.WaitFor(t, "the pids limit reached", 30*time.Second, full)
		leaseHolder(t, s, "pids-fork", time.Minute, func(h string) bool { return h != "" })
		first := getLease(t, s, "pids-fork").Spec.RenewTime.Time
		var renewed time.Time
		testutil.WaitFor(t, "a renewal while the limit is reached", 20*time.Second, func() bool {
			renewed = getLease(t, s, "pids-fork").Spec.RenewTime.Time
			return renewed.After(first) && full()
		})
		if limittest.GuardIn(cg) == 0 {
			t.Errorf("no job guard left while the limit is reached: it died under the pids limit")
		}
		code := w.wait(t, time.Minute)
		out := w.output()
		refused := limittest.PidsRefused(cg)
		t.Logf("RESULT kube run under the pids limit: renewTime %s -> %s while full, %d forks refused; exit %d",
			first.Format(time.StampMilli), renewed.Format(time.StampMilli), refused, code)
		if code != 9 || !strings.Contains(out, "settled") {
			t.Fatalf("want the job's 9 and a settled lease, have %d", code)
		}
		if refused == 0 {
			t.Errorf("the pids limit refused no fork")
		}
		if h := holderOf(getLease(t, s, "pids-fork")); h != "" {
			t.Errorf("the Lease still held by %q after the run", h)
		}
		limittest.JobLeftNothing(t, out, cg)
	})

	// The Lease is deleted while the job holds every pid: leasewrap-kube
	// stops the whole job and exits 76; nothing of the job is left.
	t.Run("Loss", func(t *testing.T) {
		cg := limittest.LimitCgroup(t, "pids", kubePidsMax)
		w := wrapInCgroup(t, b, s, cg, "pids-lost", 60)
		testutil.WaitFor(t, "the pids limit reached", 30*time.Second, func() bool { return limittest.PidsFull(cg, kubePidsMax) })
		leaseHolder(t, s, "pids-lost", time.Minute, func(h string) bool { return h != "" })
		if err := leases.Delete(context.Background(), "pids-lost", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		code := w.wait(t, time.Minute)
		out := w.output()
		t.Logf("RESULT kube run, Lease deleted under the pids limit: exit %d", code)
		if code != 76 {
			t.Fatalf("want 76, have %d", code)
		}
		limittest.JobLeftNothing(t, out, cg)
	})

	// leasewrap-kube SIGKILLed while its job holds every pid: the guard
	// kills the job cgroup; a waiter (outside the limit) gets the Lease
	// only once it lapsed, its job starting after the holder's job was seen
	// gone, and finding the holder's job cgroup gone.
	t.Run("SIGKILL", func(t *testing.T) {
		cg := limittest.LimitCgroup(t, "pids", kubePidsMax)
		w := wrapInCgroup(t, b, s, cg, "pids-killed", 60)
		testutil.WaitFor(t, "the pids limit reached", 30*time.Second, func() bool { return limittest.PidsFull(cg, kubePidsMax) })
		probe := limittest.NewNextHolderProbe(t, limittest.WaitJobCgroup(t, &w.out))
		waiter := wrap(t, b, s, kubetest.Runner, "pids-killed", []string{"--wait", "2m", "--ttl", "6s"}, nil, probe.Argv()...)
		time.Sleep(500 * time.Millisecond) // let it read the held Lease and start watching
		jobcg, held := limittest.BeforeGuardKill(t, w.out.String(), cg)
		w.Cmd.Process.Kill() // leasewrap-kube only, not its group: the guard is left to act
		killed := time.Now()
		gone := limittest.WaitCgroupEmpty(t, jobcg, "the holder's job gone (its cgroup empty)")
		limittest.WaitCgroupEmpty(t, cg, "the limited cgroup empty (the guard gone too)")
		if code := waiter.wait(t, time.Minute); code != 0 {
			t.Fatalf("waiter: want 0, have %d:\n%s", code, waiter.output())
		}
		after := probe.Check(t, gone)
		t.Logf("RESULT kube run SIGKILLed under the pids limit: job (%d processes) gone %v after the kill; waiter's job started %v after that",
			held, gone.Sub(killed).Round(time.Millisecond), after.Round(time.Millisecond))
	})
}
