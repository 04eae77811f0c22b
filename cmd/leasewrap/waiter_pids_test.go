package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/internal/testutil/limittest"
)

// TestFlockWaitersUnderATightenedPidsLimit: flock waiters that wait
// inside a pids cgroup whose limit is then tightened to what is in use
// plus what one job needs never die of a Go runtime error once the holder
// lets go. Each exits 0 having run its job once under the lock, or 70
// with one line; at least one job runs. A waiter that needed a new
// thread after it began waiting would die here of `fatal error:
// newosproc` (exit 2). Start-up is never limited: the limit is tightened
// only once every waiter waits (a refusal during Go's runtime start-up
// aborts before main, which nothing in leasewrap can prevent).
func TestFlockWaitersUnderATightenedPidsLimit(t *testing.T) {
	needFlock1(t)
	const (
		waiters = 32
		// jobTasks is one job's peak: its shell and one external command
		// (mkdir or rmdir) at a time.
		jobTasks = 2
	)
	cg := limittest.LimitCgroup(t, "pids", 4096)
	dir := t.TempDir()
	lock, ready, gone := filepath.Join(dir, "job.lock"), filepath.Join(dir, "ready"), filepath.Join(dir, "gone")
	hist := filepath.Join(dir, "hist")
	startFlock1(t, "-x", lock, ready, gone) // outside the limited cgroup
	// The job fails to make busy if another job holds it (no fork is
	// refused: the limit leaves room for one job).
	job := []string{"sh", "-c", `mkdir "$0/busy" || echo overlap >> "$0/hist"; echo "ran $$" >> "$0/hist"; rmdir "$0/busy"`, dir}
	wait := testutil.Scale(2 * time.Minute).Round(time.Second)
	var ws []*proc
	for i := range waiters {
		cmd := leasewrapCmd(t, append([]string{"flock", "run", lock, "--wait", wait.String(), "--log-level", "debug", "--"}, job...)...)
		w := startProc(t, limittest.InCgroup(cmd, cg))
		// Logged once the waiter made what its start needs, just before it blocks in flock(2).
		waitFor(t, fmt.Sprintf("waiter %d to wait for the grant", i), func() bool {
			return strings.Contains(w.stderr.String(), "waiting for the grant") || w.Exited()
		})
		if w.Exited() {
			t.Fatalf("waiter %d exited %d before the limit was tightened\n%s", i, w.Cmd.ProcessState.ExitCode(), &w.stderr)
		}
		ws = append(ws, w)
	}
	current := pidsCurrent(t, cg)
	limit := current + jobTasks
	if err := os.WriteFile(filepath.Join(cg, "pids.max"), []byte(strconv.Itoa(limit)), 0); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d waiters use %d tasks; pids.max tightened to %d", waiters, current, limit)
	os.WriteFile(gone, nil, 0o644)

	deadline := time.Now().Add(testutil.Scale(3 * time.Minute))
	zeros := 0
	for i, w := range ws {
		select {
		case <-w.Done():
		case <-time.After(time.Until(deadline)):
			t.Fatalf("waiter %d did not exit in time\n%s", i, &w.stderr)
		}
		code, stderr := w.Cmd.ProcessState.ExitCode(), w.stderr.String()
		for _, bad := range []string{"fatal error", "newosproc", "goroutine "} {
			if strings.Contains(stderr, bad) {
				t.Errorf("waiter %d printed %q (exit %d)\n%s", i, bad, code, stderr)
			}
		}
		switch lines := afterTheWait(stderr); {
		case code == 0:
			zeros++
		case code == 70 && len(lines) == 1:
			t.Logf("waiter %d exited 70: %s", i, lines[0])
		default:
			t.Errorf("waiter %d: want 0, or 70 with one line, have %d with %d lines\n%s", i, code, len(lines), stderr)
		}
	}
	b, _ := os.ReadFile(hist)
	h := string(b)
	if strings.Contains(h, "overlap") {
		t.Errorf("two jobs ran at once:\n%s", h)
	}
	if have := strings.Count(h, "ran "); have != zeros {
		t.Errorf("want one job run per waiter that exited 0 (%d), have %d\n%s", zeros, have, h)
	}
	if zeros == 0 {
		t.Error("no job ran")
	}
	t.Logf("%d of %d waiters ran their job; the limit refused %d forks", zeros, waiters, limittest.PidsRefused(cg))
}

// pidsCurrent is the cgroup's pids.current.
func pidsCurrent(t *testing.T, cg string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cg, "pids.current"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pids.current of %s: %v", cg, err)
	}
	return n
}

// afterTheWait is a waiter's stderr without its debug lines and the lines
// that say it waits: what it said once the wait was over.
func afterTheWait(stderr string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if line == "" || strings.Contains(line, " DBG ") || strings.Contains(line, "lease held; waiting") || strings.Contains(line, "lease still held; still waiting") {
			continue
		}
		out = append(out, line)
	}
	return out
}

// TestNoRoomForTheThreadsExits70: a run whose pids limit has room for Go's
// start-up but not for the threads leasewrap makes before it waits (or,
// with no wait, before it starts the command) exits 70 with one line that
// names the limit, and its command never runs: not `fatal error:
// newosproc`. The limit is one task below what a waiting run uses,
// measured first.
func TestNoRoomForTheThreadsExits70(t *testing.T) {
	needFlock1(t)
	dir := t.TempDir()
	lock, ready, gone := filepath.Join(dir, "job.lock"), filepath.Join(dir, "ready"), filepath.Join(dir, "gone")
	startFlock1(t, "-x", lock, ready, gone)
	ran := filepath.Join(dir, "ran")
	args := []string{"flock", "run", lock, "--wait", "10m", "--log-level", "debug", "--", "touch", ran}

	ref := limittest.LimitCgroup(t, "pids", 4096)
	w := startProc(t, limittest.InCgroup(leasewrapCmd(t, args...), ref))
	waitFor(t, "the reference waiter to wait for the grant", func() bool {
		return strings.Contains(w.stderr.String(), "waiting for the grant") || w.Exited()
	})
	uses := pidsCurrent(t, ref)
	w.Cmd.Process.Kill()
	if uses < 2 {
		t.Fatalf("a waiting run uses %d tasks\n%s", uses, &w.stderr)
	}

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"waiter", args},
		{"no wait", []string{"flock", "run", filepath.Join(dir, "free.lock"), "--log-level", "debug", "--", "touch", ran}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cg := limittest.LimitCgroup(t, "pids", int64(uses-1))
			p := startProc(t, limittest.InCgroup(leasewrapCmd(t, tc.args...), cg))
			code, stderr := p.wait(t), p.stderr.String()
			lines := afterTheWait(stderr)
			if code != 70 || len(lines) != 1 || !strings.Contains(lines[0], cg+"/pids.max") {
				t.Fatalf("with pids.max %d (a waiting run uses %d tasks): want 70 and one line naming %s/pids.max, have %d with %d lines\n%s", uses-1, uses, cg, code, len(lines), stderr)
			}
			if exists(ran) {
				t.Fatal("the command ran")
			}
		})
	}
}

// TestClaimGateWithNoRoomRunsNothing: a claim waiter whose pids limit,
// tightened while it waits, leaves no room for its exec gate's Go start-up
// when the claim frees. The gate dies before it is ready; the run ends 70
// naming the gate (not 2, the runtime's exit, as if the command had run
// and failed), the command never runs and the claim is left free.
func TestClaimGateWithNoRoomRunsNothing(t *testing.T) {
	root, env := claimEnv(t)
	ready, gone, ran := filepath.Join(root, "ready"), filepath.Join(root, "gone"), filepath.Join(root, "ran")
	holder := startLW(t, env, "claim", "run", "job", "--root", root, "--", "sh", "-c", holdUntil(ready, gone))
	waitFor(t, "the holder's child", func() bool { return exists(ready) })
	cg := limittest.LimitCgroup(t, "pids", 4096)
	wait := testutil.Scale(time.Minute).Round(time.Second)
	cmd := leasewrapCmd(t, "claim", "run", "job", "--root", root, "--wait", wait.String(), "--log-level", "debug", "--", "touch", ran)
	cmd.Env = append(cmd.Env, env...)
	w := startProc(t, limittest.InCgroup(cmd, cg))
	// Logged after the waiter made what its start needs (its threads).
	waitFor(t, "the waiter to retry", func() bool {
		return strings.Contains(w.stderr.String(), "lease still held; retrying") || w.Exited()
	})
	// Room for the gate's process, none for its runtime's threads.
	if err := os.WriteFile(filepath.Join(cg, "pids.max"), []byte(strconv.Itoa(pidsCurrent(t, cg)+1)), 0); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(gone, nil, 0o644)
	if code := w.wait(t); code != 70 {
		t.Fatalf("want 70, have %d\n%s", code, &w.stderr)
	}
	if !strings.Contains(w.stderr.String(), "cannot start the command: the exec gate") {
		t.Errorf("want the line that the exec gate could not start the command\n%s", &w.stderr)
	}
	if exists(ran) {
		t.Fatal("the command ran")
	}
	holder.wait(t)
	if have, p := runLW(t, env, "claim", "run", "job", "--root", root, "--", "true"); have != 0 {
		t.Fatalf("the claim is not free after the run: %d\n%s", have, &p.stderr)
	}
}
