// Package limittest holds the helpers of the resource-limit tests (issue
// 23 item 3): a job that forks up to its cgroup's pids limit, or runs out
// of memory, beside the leasewrap that supervises it. Shared by
// reliability (the local kinds) and the etcd and kube modules (tethered
// kinds, whose job guard shares the limit). It is its own package because
// it uses internal/cgroup, whose tests use testutil.
package limittest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/cgroup"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// ForkScript forks children that sleep (each allocating kib KiB) as fast
// as the limit lets it, for secs seconds, then exits with code: run it as
// `perl -e ForkScript secs code kib pause`. perl, because a shell dies of
// its first failed fork and a Go program of its runtime's first failed
// thread.
const ForkScript = `my ($secs, $code, $kib, $pause) = @ARGV; my $end = time + $secs; my $n = 0;
while (time < $end) {
  my $p = fork;
  if (!defined $p) { select(undef, undef, undef, 0.005); next }
  if ($p == 0) { my $x = "a" x ($kib * 1024); sleep 60; exit 0 }
  $n++; select(undef, undef, undef, $pause) if $pause > 0;
}
print STDERR "forked $n\n"; exit $code;`

// LimitCgroup makes a cgroup with one limit (pids.max, or the memory
// limit in bytes) for a leasewrap and its job to run in: in the cgroup v2
// hierarchy where its root offers the controller, else in the cgroup v1
// hierarchy of that controller. It returns the directory; the test's end
// kills what is left in it and removes it. Where no such cgroup can be
// made it skips, or fails under CI (Need).
func LimitCgroup(t testing.TB, controller string, limit int64) string {
	t.Helper()
	dir, err := makeLimitCgroup(controller, limit)
	testutil.Need(t, "a cgroup with a "+controller+" limit (root, and a writable cgroup v2 root offering it or its cgroup v1 hierarchy)", err)
	t.Cleanup(func() {
		for deadline := time.Now().Add(testutil.Scale(10 * time.Second)); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			pids := CgroupProcs(dir)
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

// CgroupProcs lists the pids in the cgroup at dir (none if it is gone).
func CgroupProcs(dir string) []int {
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// PidsFull reports whether the cgroup at dir holds max tasks.
func PidsFull(dir string, max int) bool {
	b, _ := os.ReadFile(filepath.Join(dir, "pids.current"))
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n >= max
}

// PidsRefused is how many forks the pids limit of the cgroup at dir has
// refused (pids.events' max).
func PidsRefused(dir string) int {
	b, _ := os.ReadFile(filepath.Join(dir, "pids.events"))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "max "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// InCgroup makes cmd run inside the cgroup at dir: a shell that moves
// itself there and execs cmd's program (its Path, with its Args[1:]); the
// process keeps the shell's pid.
func InCgroup(cmd *exec.Cmd, dir string) *exec.Cmd {
	argv := append([]string{cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/bin/sh"
	cmd.Args = append([]string{"sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir}, argv...)
	return cmd
}

var jobCgroupLine = regexp.MustCompile(`job form: cgroup.* cgroup=(\S+)`)

// JobCgroup returns the job cgroup a run's debug log names, or "".
func JobCgroup(stderr string) string {
	if m := jobCgroupLine.FindStringSubmatch(stderr); m != nil {
		return m[1]
	}
	return ""
}

// JobCgroupGone checks that the job cgroup a run's debug log names (if
// any) was removed.
func JobCgroupGone(t testing.TB, stderr string) {
	t.Helper()
	if dir := JobCgroup(stderr); dir != "" {
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the job cgroup %s is left (%v)", dir, err)
		}
	}
}

// WaitCgroupEmpty waits up to 10 s for the cgroup at dir to hold no
// process (a removed one holds none) and returns when that was seen.
func WaitCgroupEmpty(t testing.TB, dir, what string) time.Time {
	t.Helper()
	var at time.Time
	testutil.WaitFor(t, what, 10*time.Second, func() bool {
		empty := len(CgroupProcs(dir)) == 0
		at = time.Now() // after the read: the last process was gone by then
		return empty
	})
	return at
}

// WaitJobCgroup waits up to 10 s for a run's debug log (out) to name its
// job cgroup and returns it.
func WaitJobCgroup(t testing.TB, out fmt.Stringer) string {
	t.Helper()
	var dir string
	testutil.WaitFor(t, "the job cgroup named in the debug log", 10*time.Second, func() bool {
		dir = JobCgroup(out.String())
		return dir != ""
	})
	return dir
}

// JobLeftNothing checks, once a wrapper has exited, that the job cgroup
// its debug log (out) names holds nothing and was removed, and that the
// limited cgroup lim it ran in empties (its job guard gone too).
func JobLeftNothing(t testing.TB, out, lim string) {
	t.Helper()
	jobcg := JobCgroup(out)
	if jobcg == "" {
		t.Fatal("the debug log names no job cgroup")
	}
	if left := CgroupProcs(jobcg); len(left) != 0 {
		t.Errorf("processes of the job left after the wrapper exited: %v", left)
	}
	JobCgroupGone(t, out)
	WaitCgroupEmpty(t, lim, "the limited cgroup empty (the job guard gone too)")
}

// NextHolderProbe is the job of a waiter that takes a lock after its
// holder was SIGKILLed: it notes when it starts (wall clock, ns) and what
// is left in the holder's job cgroup then.
type NextHolderProbe struct{ start, seen, jobcg string }

// NewNextHolderProbe makes a probe of the holder's job cgroup jobcg.
func NewNextHolderProbe(t testing.TB, jobcg string) *NextHolderProbe {
	dir := t.TempDir()
	return &NextHolderProbe{filepath.Join(dir, "start"), filepath.Join(dir, "seen"), jobcg}
}

// Argv is the waiter's command.
func (p *NextHolderProbe) Argv() []string {
	script := `date +%s%N > "$1"; if test -d "$3"; then cat "$3/cgroup.procs"; fi > "$2"`
	return []string{"sh", "-c", script, "sh", p.start, p.seen, p.jobcg}
}

// Check, once the waiter has exited, that its job started after gone
// (when the holder's job was seen gone) and saw nothing of it, and that
// the job guard removed the holder's job cgroup. It returns how long after
// gone the waiter's job started.
func (p *NextHolderProbe) Check(t testing.TB, gone time.Time) time.Duration {
	t.Helper()
	start, err := strconv.ParseInt(strings.TrimSpace(testutil.WaitFile(t, p.start, time.Second)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if start <= gone.UnixNano() {
		t.Errorf("the waiter's job started (%d) before the holder's job was seen gone (%d)", start, gone.UnixNano())
	}
	seen, _ := os.ReadFile(p.seen)
	if s := strings.TrimSpace(string(seen)); s != "" {
		t.Errorf("the waiter's job started while the holder's job cgroup held %s", s)
	}
	testutil.WaitFor(t, "the job guard to remove the job cgroup", 10*time.Second, func() bool {
		_, err := os.Stat(p.jobcg)
		return errors.Is(err, os.ErrNotExist)
	})
	return time.Duration(start - gone.UnixNano())
}

// GuardIn returns the pid of a leasewrap job guard (a process with
// LEASEWRAP_GUARD in its environment) in the cgroup at dir, or 0.
func GuardIn(dir string) int {
	for _, pid := range CgroupProcs(dir) {
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.HasPrefix(kv, []byte("LEASEWRAP_GUARD=")) {
				return pid
			}
		}
	}
	return 0
}

// BeforeGuardKill checks, before a wrapper that ran in the limited cgroup
// lim is SIGKILLed, that the job cgroup its debug log (out) names holds
// the job and that its job guard is alive; it returns the job cgroup and
// how many processes it holds.
func BeforeGuardKill(t testing.TB, out, lim string) (jobcg string, held int) {
	t.Helper()
	jobcg = JobCgroup(out)
	if held = len(CgroupProcs(jobcg)); held == 0 {
		t.Fatalf("the job cgroup %q is empty before the kill", jobcg)
	}
	if GuardIn(lim) == 0 {
		t.Fatal("no job guard left before the kill: it died under the pids limit (its output is the wrapper's)")
	}
	return jobcg, held
}
