package main

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/internal/testutil/limittest"
)

// pidsMax is the limit of the cgroup the wrapper, its guard and its job
// share (systemd's TasksMax, a container's limits): `lock run`'s job forks
// until pids.max refuses; GOMAXPROCS=32 in the environment stands for a
// host with many CPUs (reliability/limits_test.go runs the local kinds).
const pidsMax = 120

// startInCgroup starts leasewrap-etcd (the re-executed test binary, as
// startLW) inside the cgroup at cg, with a text debug log.
func startInCgroup(t *testing.T, cg string, args ...string) *wrapper {
	t.Helper()
	w := &wrapper{}
	cmd := exec.Command(os.Args[0], append([]string{"--log-level", "debug"}, args...)...)
	cmd.Env = append(os.Environ(), envMain+"=1", "LEASEWRAP_LOG_FORMAT=text", "GOMAXPROCS=32")
	cmd.Stdout, cmd.Stderr = &w.out, &w.out
	w.Group = testutil.StartGroup(t, limittest.InCgroup(cmd, cg))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("leasewrap-etcd's output:\n%s", w.out.String())
		}
	})
	return w
}

// forkingJob is `lock run NAME` (job cgroup, TTL 4 s) of a job that forks
// up to its limit for secs seconds, then exits 9.
func forkingJob(name string, eps []string, secs int, extra ...string) []string {
	flags := append([]string{"--job", "cgroup", "--ttl", "4s", "--renew-every", "500ms", "--kill-grace", "1s"}, extra...)
	return lockArgs(name, eps, flags, "perl", "-e", limittest.ForkScript, strconv.Itoa(secs), "9", "0", "0")
}

// holderLease returns the lease of the oldest key under the lock's
// prefix: the holder's.
func holderLease(t *testing.T, cli *clientv3.Client, name string) clientv3.LeaseID {
	t.Helper()
	resp, err := cli.Get(context.Background(), name+"/", clientv3.WithFirstCreate()...)
	if err != nil || len(resp.Kvs) == 0 || resp.Kvs[0].Lease == 0 {
		t.Fatalf("no holder's key under %s/ (%v)", name, err)
	}
	return clientv3.LeaseID(resp.Kvs[0].Lease)
}

// The job forks to the limit for 12 s, then exits 9: leasewrap-etcd keeps
// the etcd lease alive across the saturated period (the lease is still
// there more than its TTL after the limit was reached, which only
// keep-alives sent while the job held every pid explain), settles, exits
// 9; nothing is left in the cgroup and the lock's key is gone.
func TestLockRunJobForkingToItsPidsLimit(t *testing.T) {
	for round := range 2 {
		cg := limittest.LimitCgroup(t, "pids", pidsMax)
		c := etcdtest.Start(t, etcdtest.Options{})
		cli := c.Client(t)
		w := startInCgroup(t, cg, forkingJob("pids", c.Endpoints(), 12)...)
		full := func() bool { return limittest.PidsFull(cg, pidsMax) }
		testutil.WaitFor(t, "the pids limit reached", 20*time.Second, full)
		id := holderLease(t, cli, "pids")
		reached := time.Now()
		var ttl int64
		var alive time.Duration
		testutil.WaitFor(t, "the lease alive a TTL (4 s) + 2 s after the limit was reached, the limit still reached", 20*time.Second, func() bool {
			r, err := cli.TimeToLive(context.Background(), id)
			if err != nil || r.TTL <= 0 {
				t.Fatalf("the holder's lease %x expired while the job held every pid (%v, %+v)", id, err, r)
			}
			ttl, alive = r.TTL, time.Since(reached)
			return alive > 6*time.Second && full()
		})
		if limittest.GuardIn(cg) == 0 {
			t.Errorf("round %d: no job guard left while the limit is reached: it died under the pids limit", round)
		}
		code := w.wait(t, time.Minute)
		out := w.out.String()
		refused := limittest.PidsRefused(cg)
		t.Logf("RESULT round %d: lease %x alive (TTL left %ds) %v after the limit was reached, %d forks refused; exit %d | %s", round, id, ttl, alive.Round(time.Millisecond), refused, code, lastLineOf(out))
		if refused == 0 {
			t.Errorf("round %d: the pids limit refused no fork", round)
		}
		if code != 9 || !strings.Contains(out, "settled") {
			t.Fatalf("round %d: want the job's 9 and a settled lease, have %d", round, code)
		}
		if n := countKeys(t, cli, "pids/"); n != 0 {
			t.Errorf("round %d: %d keys left under the lock's prefix", round, n)
		}
		limittest.JobLeftNothing(t, out, cg)
	}
}

// The holder's etcd lease is revoked while its job holds every pid:
// leasewrap-etcd stops the whole job and exits 76; nothing of the job is
// left.
func TestLockRunLossWhileTheJobHoldsEveryPid(t *testing.T) {
	cg := limittest.LimitCgroup(t, "pids", pidsMax)
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	w := startInCgroup(t, cg, forkingJob("lost", c.Endpoints(), 30)...)
	testutil.WaitFor(t, "the pids limit reached", 20*time.Second, func() bool { return limittest.PidsFull(cg, pidsMax) })
	if _, err := cli.Revoke(context.Background(), holderLease(t, cli, "lost")); err != nil {
		t.Fatal(err)
	}
	code := w.wait(t, time.Minute)
	out := w.out.String()
	t.Logf("RESULT loss under the pids limit: exit %d | %s", code, lastLineOf(out))
	if code != 76 || (!strings.Contains(out, "was deleted at revision") && !strings.Contains(out, "expired or revoked")) {
		t.Fatalf("want 76 and the loss named, have %d", code)
	}
	limittest.JobLeftNothing(t, out, cg)
}

// leasewrap-etcd is SIGKILLed while its job holds every pid: the guard,
// started before the job, kills the job's cgroup; nothing of the job is
// left within 10 s. A waiter (outside the limit) takes the lock only once
// the lease has lapsed, and the history shows its job started after the
// last of the holder's job was seen gone, and saw the job cgroup empty.
func TestLockRunSIGKILLWhileTheJobHoldsEveryPid(t *testing.T) {
	cg := limittest.LimitCgroup(t, "pids", pidsMax)
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	w := startInCgroup(t, cg, forkingJob("killed", c.Endpoints(), 30)...)
	testutil.WaitFor(t, "the pids limit reached", 20*time.Second, func() bool { return limittest.PidsFull(cg, pidsMax) })
	probe := limittest.NewNextHolderProbe(t, limittest.WaitJobCgroup(t, &w.out))
	waiter := startLW(t, nil, lockArgs("killed", c.Endpoints(), []string{"--wait", "1m", "--ttl", "4s"}, probe.Argv()...)...)
	waitKeys(t, cli, "killed/", 2)
	jobcg, held := limittest.BeforeGuardKill(t, w.out.String(), cg)
	w.Cmd.Process.Kill() // the wrapper only, not its group: the guard is left to act
	killed := time.Now()
	gone := limittest.WaitCgroupEmpty(t, jobcg, "the holder's job gone (its cgroup empty)")
	limittest.WaitCgroupEmpty(t, cg, "the limited cgroup empty (the guard gone too)")
	if code := waiter.wait(t, time.Minute); code != 0 {
		t.Fatalf("waiter: want 0, have %d:\n%s", code, waiter.out.String())
	}
	after := probe.Check(t, gone)
	t.Logf("RESULT SIGKILL under the pids limit: job (%d processes) gone %v after the kill; waiter's job started %v after that",
		held, gone.Sub(killed).Round(time.Millisecond), after.Round(time.Millisecond))
}
