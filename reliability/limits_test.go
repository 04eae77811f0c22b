package reliability

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/cgroup"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// Issue 23 item 3, "leasewrap outlives its job's resource limits": a job
// that forks up to a pids limit, or runs out of memory, in a cgroup it
// shares with leasewrap (systemd's TasksMax, a container's limits) ends;
// leasewrap keeps renewing, stops the job on loss, settles and exits with
// the job's code. Before: `fatal error: newosproc` (exit 2, the claim and
// the job cgroup left, the job unsupervised), or leasewrap OOM-killed.

// forkScript forks children that sleep (each allocating kib KiB) as fast
// as the limit lets it, for secs seconds, then exits with code. perl,
// because a shell dies of its first failed fork and a Go program of its
// runtime's first failed thread.
const forkScript = `my ($secs, $code, $kib, $pause) = @ARGV; my $end = time + $secs; my $n = 0;
while (time < $end) {
  my $p = fork;
  if (!defined $p) { select(undef, undef, undef, 0.005); next }
  if ($p == 0) { my $x = "a" x ($kib * 1024); sleep 60; exit 0 }
  $n++; select(undef, undef, undef, $pause) if $pause > 0;
}
print STDERR "forked $n\n"; exit $code;`

// limitCgroup makes a cgroup with one limit (pids.max, or the memory
// limit in bytes) for a leasewrap and its job to run in: in the cgroup v2
// hierarchy where its root offers the controller, else in the cgroup v1
// hierarchy of that controller (this host's). It returns the directory;
// the test's end kills what is left in it and removes it.
func limitCgroup(t *testing.T, controller string, limit int64) string {
	t.Helper()
	dir, err := makeLimitCgroup(controller, limit)
	testutil.Need(t, "a cgroup with a "+controller+" limit (root, and a writable cgroup v2 root offering it or its cgroup v1 hierarchy)", err)
	t.Cleanup(func() {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			pids := cgroupProcs(dir)
			if len(pids) == 0 && unix.Rmdir(dir) == nil {
				return
			}
			for _, pid := range pids {
				unix.Kill(pid, unix.SIGKILL)
			}
		}
		t.Errorf("could not empty and remove %s", dir)
	})
	return dir
}

func makeLimitCgroup(controller string, limit int64) (string, error) {
	name := fmt.Sprintf("lwtest-%s-%d-%d", controller, os.Getpid(), time.Now().UnixNano())
	v := strconv.FormatInt(limit, 10)
	var v2err error
	if pl, err := cgroup.Locate(); err != nil {
		v2err = err
	} else if b, err := os.ReadFile(filepath.Join(pl.Mount, "cgroup.controllers")); err != nil || !strings.Contains(" "+string(bytes.TrimSpace(b))+" ", " "+controller+" ") {
		v2err = fmt.Errorf("the cgroup v2 root %s does not offer %s (%q, %v)", pl.Mount, controller, bytes.TrimSpace(b), err)
	} else if err := os.WriteFile(filepath.Join(pl.Mount, "cgroup.subtree_control"), []byte("+"+controller), 0); err != nil {
		v2err = fmt.Errorf("enable %s below %s: %w", controller, pl.Mount, err)
	} else {
		dir := filepath.Join(pl.Mount, name)
		file := map[string]string{"pids": "pids.max", "memory": "memory.max"}[controller]
		if err := os.Mkdir(dir, 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(v), 0); err != nil {
			unix.Rmdir(dir)
			return "", err
		}
		os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0)
		return dir, nil
	}
	v1 := filepath.Join("/sys/fs/cgroup", controller)
	var st unix.Statfs_t
	if err := unix.Statfs(v1, &st); err != nil || st.Type != unix.CGROUP_SUPER_MAGIC {
		return "", fmt.Errorf("%v; and no cgroup v1 %s hierarchy at %s (%v)", v2err, controller, v1, err)
	}
	dir := filepath.Join(v1, name)
	file := map[string]string{"pids": "pids.max", "memory": "memory.limit_in_bytes"}[controller]
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("%v; and %w", v2err, err)
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(v), 0); err != nil {
		unix.Rmdir(dir)
		return "", fmt.Errorf("%v; and %w", v2err, err)
	}
	return dir, nil
}

func cgroupProcs(dir string) []int {
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// pidsFull reports whether the cgroup at dir holds max tasks.
func pidsFull(dir string, max int) bool {
	b, _ := os.ReadFile(filepath.Join(dir, "pids.current"))
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n >= max
}

// inCgroup is a command that runs argv inside the cgroup at dir: a shell
// that moves itself there and execs.
func (e *env) inCgroup(dir string, extraEnv []string, argv ...string) *exec.Cmd {
	cmd := e.lwCmd(extraEnv)
	cmd.Path = "/bin/sh"
	cmd.Args = append([]string{"sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir}, argv...)
	return cmd
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

var jobCgroupLine = regexp.MustCompile(`job form: cgroup.* cgroup=(\S+)`)

// jobCgroupGone checks that the job cgroup a run's debug log names (if
// any) was removed.
func jobCgroupGone(t *testing.T, stderr string) {
	t.Helper()
	if m := jobCgroupLine.FindStringSubmatch(stderr); m != nil {
		if _, err := os.Stat(m[1]); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the job cgroup %s is left (%v)", m[1], err)
		}
	}
}

// TestJobForkingToItsPidsLimit: leasewrap and a job that forks until the
// cgroup's pids.max refuses, for 3 s, then exits 9. GOMAXPROCS=32 in the
// environment stands for a host with many CPUs, where the Go runtime
// starts threads lazily up to one per P: before, leasewrap crashed with
// `newosproc` (exit 2) in most runs. Now it renews the claim while the
// limit is reached (expires_at moves), settles and exits 9.
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
				cg := limitCgroup(t, "pids", 120)
				argv := append([]string{lwBin, "--log-level", "debug"}, k.args(e)...)
				argv = append(argv, "--", "perl", "-e", forkScript, "3", "9", "0", "0")
				done := make(chan result, 1)
				cmd := e.inCgroup(cg, []string{"GOMAXPROCS=32"}, argv...)
				go func() { done <- runToExit(t, cmd) }()
				full := func() bool { return pidsFull(cg, 120) }
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
				jobCgroupGone(t, r.err)
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
	cg := limitCgroup(t, "pids", 120)
	argv := []string{lwBin, "--log-level", "debug", "claim", "run", "lost", "--root", e.claimRoot(), "--ttl", "1m",
		"--renew-every", "200ms", "--kill-grace", "1s", "--", "perl", "-e", forkScript, "30", "9", "0", "0"}
	done := make(chan result, 1)
	cmd := e.inCgroup(cg, []string{"GOMAXPROCS=32"}, argv...)
	go func() { done <- runToExit(t, cmd) }()
	testutil.WaitFor(t, "the pids limit reached", 10*time.Second, func() bool { return pidsFull(cg, 120) })
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
	if left := cgroupProcs(cg); len(left) != 0 {
		t.Errorf("processes of the job left after leasewrap exited: %v", left)
	}
	jobCgroupGone(t, r.err)
}

// TestJobOutOfMemory: leasewrap and a job of many small processes (1 MiB
// each, forked every 10 ms for 3 s) share a 48 MiB memory limit. The OOM
// killer must pick the job's processes: before, leasewrap (the largest
// process, 8–12 MB resident) was SIGKILLed first, leaving the claim and
// the job unsupervised. The job's own main process may be killed too: its
// code (137) or its 9 is passed on.
func TestJobOutOfMemory(t *testing.T) {
	e := newEnv(t)
	cg := limitCgroup(t, "memory", 48<<20)
	argv := []string{lwBin, "--log-level", "debug", "claim", "run", "oom", "--root", e.claimRoot(), "--ttl", "1m",
		"--renew-every", "200ms", "--kill-grace", "1s", "--", "perl", "-e", forkScript, "3", "9", "1024", "0.01"}
	r := runToExit(t, e.inCgroup(cg, nil, argv...))
	t.Logf("RESULT out of memory: exit %d signal %d", r.code, r.signal)
	if r.signal != 0 || (r.code != 9 && r.code != 128+int(syscall.SIGKILL)) || !strings.Contains(r.err, "settled") {
		t.Fatalf("want leasewrap to settle and pass on the job's 9 or 137, have %v", r)
	}
	if _, state := e.claimExpiry("oom"); state != "free" {
		t.Errorf("claim state after the run: want free, have %q", state)
	}
	jobCgroupGone(t, r.err)
}
