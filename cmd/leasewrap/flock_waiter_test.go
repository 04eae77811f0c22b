package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// TestFlockWaiterStartsItsCommandAfterTheGrant: a flock kind waiter
// behind a flock(1) holder waits as flock -w does, with no child process,
// until the holder lets go (by closing its descriptor or by `flock -u`);
// then the command runs holding the lock (flock -n from outside fails
// while it runs) and the lock is free once it exits. A waiter SIGKILLed
// once its command runs leaves the lock with the command.
func TestFlockWaiterStartsItsCommandAfterTheGrant(t *testing.T) {
	needFlock1(t)
	for _, idiom := range []struct{ name, end string }{
		{"holder closes", "exec 9<&-"},
		{"holder unlocks with flock -u", "flock -u 9"},
	} {
		for _, tc := range []struct {
			name      string
			killAfter bool // SIGKILL the waiter once its command runs
		}{
			{name: "runs"},
			{name: "waiter SIGKILLed while its command runs", killAfter: true},
		} {
			t.Run(idiom.name+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				lock := filepath.Join(dir, "job.lock")
				ready, release, released, gone := filepath.Join(dir, "ready"), filepath.Join(dir, "release"), filepath.Join(dir, "released"), filepath.Join(dir, "gone")
				shellHolder(t, lock, release, ready, released, gone, idiom.end)
				ran, jobGone := filepath.Join(dir, "ran-marker"), filepath.Join(dir, "job-gone")
				pidFile := filepath.Join(dir, "job-pid")
				waiter := startLW(t, nil, "flock", "run", lock, "--wait", "30s", "--", "sh", "-c", "echo $$ > "+pidFile+"; touch "+ran+"; "+waitUntil(jobGone))
				t.Cleanup(func() { os.WriteFile(jobGone, nil, 0o644) })
				waitFor(t, "the waiter to wait", func() bool { return strings.Contains(waiter.stderr.String(), "lease held; waiting") })
				if kids := childrenOf(waiter.Cmd.Process.Pid); len(kids) != 0 {
					t.Fatalf("want no child process of a waiting leasewrap, have %v", kids)
				}
				os.WriteFile(release, nil, 0o644)
				waitFor(t, "the waiter's command", func() bool { return exists(ran) })
				if tc.killAfter {
					waitFor(t, "the command's pid", func() bool { b, _ := os.ReadFile(pidFile); return len(b) > 1 })
					b, _ := os.ReadFile(pidFile)
					job, _ := strconv.Atoi(strings.TrimSpace(string(b)))
					waiter.Cmd.Process.Signal(syscall.SIGKILL)
					<-waiter.Done()
					if !alive(job) {
						t.Fatal("the command did not outlive its SIGKILLed leasewrap")
					}
				}
				if flockN(t, "-x", lock) {
					t.Fatal("flock -n got the lock while the waiter's command ran")
				}
				os.WriteFile(jobGone, nil, 0o644)
				if tc.killAfter {
					waitFor(t, "the command to end", func() bool { return len(processesWith(ran)) == 0 })
				} else if have := waiter.wait(t); have != 0 {
					t.Fatalf("waiter: want 0, have %d\n%s", have, &waiter.stderr)
				}
				if !flockN(t, "-x", lock) {
					t.Fatal("the lock is still held after the waiter's command ended")
				}
			})
		}
	}
}

// childrenOf lists the live child processes of pid (every thread's).
func childrenOf(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, task := range tasks {
		b, _ := os.ReadFile(task)
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil && alive(c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// TestFlockNoWaitRunsNothing: a run that does not wait (the default, -n)
// exits 75 when the lock is held and its command never runs.
func TestFlockNoWaitRunsNothing(t *testing.T) {
	needFlock1(t)
	dir := t.TempDir()
	lock, ready, gone := filepath.Join(dir, "job.lock"), filepath.Join(dir, "ready"), filepath.Join(dir, "gone")
	startFlock1(t, "-x", lock, ready, gone)
	ran := filepath.Join(dir, "ran-marker")
	have, p := runLW(t, nil, "flock", "run", lock, "--log-level", "debug", "--", "touch", ran)
	if have != 75 {
		t.Fatalf("want 75, have %d\n%s", have, &p.stderr)
	}
	if exists(ran) {
		t.Fatalf("a run that does not wait started its command\n%s", &p.stderr)
	}
}

// TestWaiterLeavesTheTerminalToLeasewrap: a waiter under a terminal keeps
// the terminal's foreground group while it waits, with no child, so ^C
// reaches it and ends the wait (130; the command never runs, nothing is
// left); once the lease is taken the command gets the terminal. For the
// flock kind and the claim kind (whose command starts behind the exec
// gate).
func TestWaiterLeavesTheTerminalToLeasewrap(t *testing.T) {
	needFlock1(t)
	for _, kind := range []string{"flock", "claim"} {
		for _, interrupt := range []bool{true, false} {
			name := kind + "/hand-over"
			if interrupt {
				name = kind + "/^C while waiting"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				ready, gone := filepath.Join(dir, "ready"), filepath.Join(dir, "gone")
				var env, args []string
				switch kind {
				case "flock":
					lock := filepath.Join(dir, "job.lock")
					startFlock1(t, "-x", lock, ready, gone)
					args = []string{"flock", "run", lock}
				case "claim":
					var root string
					root, env = claimEnv(t)
					holder := startLW(t, env, "claim", "run", "job", "--root", root, "--", "sh", "-c", holdUntil(ready, gone))
					t.Cleanup(func() { os.WriteFile(gone, nil, 0o644); holder.wait(t) })
					waitFor(t, "the holder's child", func() bool { return exists(ready) })
					args = []string{"claim", "run", "job", "--root", root}
				}
				stat := filepath.Join(dir, "stat-marker")
				master, slave := testutil.OpenPTY(t)
				cmd := leasewrapCmd(t, append(args, "--wait", "30s", "--", "sh", "-c", "cat /proc/self/stat > "+stat)...)
				cmd.Env = append(cmd.Env, env...)
				cmd.Stdin = slave
				cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
				waiter := startProc(t, cmd)
				waitFor(t, "the waiter to wait", func() bool { return strings.Contains(waiter.stderr.String(), "lease held; waiting") })
				if kids := childrenOf(waiter.Cmd.Process.Pid); len(kids) != 0 {
					t.Fatalf("want no child process of a waiting leasewrap, have %v", kids)
				}
				if fg := foreground(t, master); fg != waiter.Cmd.Process.Pid {
					t.Fatalf("want leasewrap's group %d in the foreground while it waits, have %d", waiter.Cmd.Process.Pid, fg)
				}
				if interrupt {
					master.Write([]byte{0x03}) // ^C
					if have := waiter.wait(t); have != 130 {
						t.Fatalf("want 130 after ^C, have %d\n%s", have, &waiter.stderr)
					}
					if exists(stat) {
						t.Fatal("the command of a waiter interrupted by ^C ran")
					}
					return
				}
				os.WriteFile(gone, nil, 0o644)
				if have := waiter.wait(t); have != 0 {
					t.Fatalf("waiter: want 0, have %d\n%s", have, &waiter.stderr)
				}
				// /proc/PID/stat after "(comm) ": state ppid pgrp session tty_nr tpgid.
				b, err := os.ReadFile(stat)
				if err != nil {
					t.Fatal(err)
				}
				f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
				if len(f) < 6 || f[2] != f[5] {
					t.Fatalf("want the command's group in the terminal's foreground, have stat %q", b)
				}
			})
		}
	}
}

// foreground is the terminal's foreground process group.
func foreground(t *testing.T, master *os.File) int {
	t.Helper()
	pg, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPGRP)
	if err != nil {
		t.Fatal(err)
	}
	return pg
}
