package reliability

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/internal/testutil/limittest"
)

// inCgroup is a command that runs argv inside the cgroup at dir, one it
// shares with leasewrap (systemd's TasksMax, a container's limits): a job
// that forks up to a pids limit or runs out of memory there ends, and
// leasewrap keeps renewing, stops the job on loss, settles and exits with
// the job's code.
func (e *env) inCgroup(dir string, extraEnv []string, argv ...string) *exec.Cmd {
	cmd := e.lwCmd(extraEnv, argv[1:]...)
	cmd.Path = argv[0]
	return limittest.InCgroup(cmd, dir)
}

// claimExpiry reads a claim's expires_at (ms) with `claim status`, from
// outside the limited cgroup.
func (e *env) claimExpiry(key string) (int64, string) {
	r := e.lw(nil, "claim", "status", key, "--root", e.claimRoot())
	var st struct {
		State     string `json:"state"`
		ExpiresAt int64  `json:"expires_at"`
	}
	json.Unmarshal([]byte(r.out), &st)
	return st.ExpiresAt, st.State
}

// TestJobForkingToItsPidsLimit: leasewrap and a job that forks until the
// cgroup's pids.max refuses, for 3 s, then exits 9. GOMAXPROCS=32 in the
// environment stands for a host with many CPUs, where the Go runtime
// starts threads lazily up to one per P. leasewrap renews the claim while
// the limit is reached (expires_at moves), settles and exits 9.
func TestJobForkingToItsPidsLimit(t *testing.T) {
	for _, k := range []struct {
		name  string
		claim bool
		args  func(e *env) []string
	}{
		{"claim/ttl", true, func(e *env) []string {
			return []string{"claim", "run", "pids", "--root", e.claimRoot(), "--ttl", "1m", "--renew-every", "200ms"}
		}},
		{"flock", false, func(e *env) []string {
			return []string{"flock", "run", filepath.Join(e.dir, "pids.lock"), "--renew-every", "100ms"}
		}},
	} {
		t.Run(k.name, func(t *testing.T) {
			for round := range 3 {
				e := newEnv(t)
				cg := limittest.LimitCgroup(t, "pids", 120)
				argv := append([]string{lwBin, "--log-level", "debug"}, k.args(e)...)
				argv = append(argv, "--", "perl", "-e", limittest.ForkScript, "3", "9", "0", "0")
				done := make(chan result, 1)
				cmd := e.inCgroup(cg, []string{"GOMAXPROCS=32"}, argv...)
				go func() { done <- runToExit(t, cmd) }()
				full := func() bool { return limittest.PidsFull(cg, 120) }
				if k.claim {
					testutil.WaitFor(t, "the pids limit reached", 10*time.Second, full)
					first, _ := e.claimExpiry("pids")
					testutil.WaitFor(t, "a renewal while the limit is reached", 10*time.Second, func() bool {
						exp, _ := e.claimExpiry("pids")
						return exp > first && full()
					})
				}
				var r result
				select {
				case r = <-done:
				case <-time.After(time.Minute):
					t.Fatal("leasewrap still running after a minute")
				}
				t.Logf("RESULT %s round %d: exit %d", k.name, round, r.code)
				if r.code != 9 || !strings.Contains(r.err, "settled") {
					t.Fatalf("round %d: want the job's 9 and a settled lease, have %v", round, r)
				}
				if k.claim {
					if _, state := e.claimExpiry("pids"); state != "free" {
						t.Errorf("round %d: claim state after the run: want free, have %q", round, state)
					}
				}
				limittest.JobCgroupGone(t, r.err)
			}
		})
	}
}

// TestLossWhileTheJobHoldsEveryPid: the claim's record is removed while
// the job holds every pid the limit allows: leasewrap's next renewal sees
// the loss, stops the whole job, settles and exits 76 (before: newosproc,
// exit 2, in most runs).
func TestLossWhileTheJobHoldsEveryPid(t *testing.T) {
	e := newEnv(t)
	cg := limittest.LimitCgroup(t, "pids", 120)
	argv := []string{lwBin, "--log-level", "debug", "claim", "run", "lost", "--root", e.claimRoot(), "--ttl", "1m",
		"--renew-every", "200ms", "--kill-grace", "1s", "--", "perl", "-e", limittest.ForkScript, "30", "9", "0", "0"}
	done := make(chan result, 1)
	cmd := e.inCgroup(cg, []string{"GOMAXPROCS=32"}, argv...)
	go func() { done <- runToExit(t, cmd) }()
	testutil.WaitFor(t, "the pids limit reached", 10*time.Second, func() bool { return limittest.PidsFull(cg, 120) })
	recs, _ := filepath.Glob(filepath.Join(e.claimRoot(), "*", "claims", "lost.lock"))
	if len(recs) != 1 {
		t.Fatalf("want one claim record lost.lock under %s, have %v", e.claimRoot(), recs)
	}
	if err := os.Remove(recs[0]); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(time.Minute):
		t.Fatal("leasewrap still running after a minute")
	}
	t.Logf("RESULT loss under the pids limit: exit %d", r.code)
	if r.code != 76 || !strings.Contains(r.err, "lease lost") {
		t.Fatalf("want 76 and the loss logged, have %v", r)
	}
	if left := limittest.CgroupProcs(cg); len(left) != 0 {
		t.Errorf("processes of the job left after leasewrap exited: %v", left)
	}
	limittest.JobCgroupGone(t, r.err)
}

// TestJobOutOfMemory: leasewrap and a job of many small processes (1 MiB
// each, forked every 10 ms for 3 s) share a 48 MiB memory limit. The OOM
// killer must pick the job's processes: before, leasewrap (the largest
// process, 8–12 MB resident) was SIGKILLed first, leaving the claim and
// the job unsupervised. The job's own main process may be killed too: its
// code (137) or its 9 is passed on.
func TestJobOutOfMemory(t *testing.T) {
	e := newEnv(t)
	cg := limittest.LimitCgroup(t, "memory", 48<<20)
	argv := []string{lwBin, "--log-level", "debug", "claim", "run", "oom", "--root", e.claimRoot(), "--ttl", "1m",
		"--renew-every", "200ms", "--kill-grace", "1s", "--", "perl", "-e", limittest.ForkScript, "3", "9", "1024", "0.01"}
	r := runToExit(t, e.inCgroup(cg, nil, argv...))
	t.Logf("RESULT out of memory: exit %d signal %d", r.code, r.signal)
	if r.signal != 0 || (r.code != 9 && r.code != 128+int(syscall.SIGKILL)) || !strings.Contains(r.err, "settled") {
		t.Fatalf("want leasewrap to settle and pass on the job's 9 or 137, have %v", r)
	}
	if _, state := e.claimExpiry("oom"); state != "free" {
		t.Errorf("claim state after the run: want free, have %q", state)
	}
	limittest.JobCgroupGone(t, r.err)
}
