package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// setuidCopy copies the program at path into dir with its set-user-ID
// bit set: leasewrap never traces such a program (it would lose its
// privileges), so a waiter holds it stopped in the exec gate instead.
func setuidCopy(t *testing.T, dir, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "suid-"+filepath.Base(path))
	if err := os.WriteFile(out, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(out, os.ModeSetuid|0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFlockWaiterHandsOverToItsWaitingChild: a flock kind waiter starts
// its command stopped while a flock(1) holder has the lock, and keeps it
// stopped (the marker stays absent) until the holder lets go, by closing
// its descriptor or by `flock -u`; then the command runs holding the
// lock (flock -n from outside fails while it runs) and the lock is free
// once it exits. The child waits under ptrace, or in the exec gate for a
// set-user-ID program. A waiter SIGKILLed once its command runs leaves
// the lock with the command, as one that started it running does.
func TestFlockWaiterHandsOverToItsWaitingChild(t *testing.T) {
	needFlock1(t)
	for _, idiom := range []struct{ name, end string }{
		{"holder closes", "exec 9<&-"},
		{"holder unlocks with flock -u", "flock -u 9"},
	} {
		for _, tc := range []struct {
			name      string
			gate      bool // a set-user-ID shell: the exec gate holds it
			killAfter bool // SIGKILL the waiter once its command runs
		}{
			{name: "ptrace"},
			{name: "gate", gate: true},
			{name: "waiter SIGKILLed while its command runs", killAfter: true},
		} {
			t.Run(idiom.name+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				lock := filepath.Join(dir, "job.lock")
				ready, release, released, gone := filepath.Join(dir, "ready"), filepath.Join(dir, "release"), filepath.Join(dir, "released"), filepath.Join(dir, "gone")
				shellHolder(t, lock, release, ready, released, gone, idiom.end)
				ran, jobGone := filepath.Join(dir, "ran-marker"), filepath.Join(dir, "job-gone")
				sh := "sh"
				if tc.gate {
					sh = setuidCopy(t, dir, "/bin/sh")
				}
				waiter := startLW(t, nil, "flock", "run", lock, "--wait", "30s", "--", sh, "-c", "touch "+ran+"; "+waitUntil(jobGone))
				t.Cleanup(func() { os.WriteFile(jobGone, nil, 0o644) })
				waitFor(t, "the waiter to wait", func() bool { return strings.Contains(waiter.stderr.String(), "lease held; waiting") })
				waitFor(t, "the waiter's stopped child", func() bool { return len(processesWith(ran)) == 2 }) // the waiter and its child
				if exists(ran) {
					t.Fatal("the waiter's command ran while the holder had the lock")
				}
				if want, have := map[bool]int{false: 1, true: 2}[tc.gate], len(leasewraps(processesWith(ran))); have != want {
					t.Fatalf("want %d leasewrap processes (the waiter, and the exec gate of a set-user-ID program), have %d", want, have)
				}
				os.WriteFile(release, nil, 0o644)
				waitFor(t, "the waiter's command", func() bool { return exists(ran) })
				if tc.killAfter {
					waiter.Cmd.Process.Signal(syscall.SIGKILL)
					<-waiter.Done()
					if len(processesWith(ran)) != 1 {
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

// TestFlockNoWaitStartsNothingStopped: a run that does not wait (the
// default, -n) starts no stopped child when the lock is held: it exits
// 75 and nothing of its command ever existed.
func TestFlockNoWaitStartsNothingStopped(t *testing.T) {
	needFlock1(t)
	dir := t.TempDir()
	lock, ready, gone := filepath.Join(dir, "job.lock"), filepath.Join(dir, "ready"), filepath.Join(dir, "gone")
	startFlock1(t, "-x", lock, ready, gone)
	ran := filepath.Join(dir, "ran-marker")
	have, p := runLW(t, nil, "flock", "run", lock, "--log-level", "debug", "--", "touch", ran)
	if have != 75 {
		t.Fatalf("want 75, have %d\n%s", have, &p.stderr)
	}
	if strings.Contains(p.stderr.String(), "command started stopped") || exists(ran) {
		t.Fatalf("a run that does not wait started its command\n%s", &p.stderr)
	}
}

// TestWaiterLeavesTheTerminalToLeasewrap: a waiter under a terminal keeps
// the terminal's foreground group while its command waits stopped, so ^C
// reaches it and ends the wait (130; the command never runs, nothing is
// left); once the lease is taken the command gets the terminal. For both
// kinds that start their command while waiting.
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
				waitFor(t, "the waiter's stopped child", func() bool { return len(processesWith(stat)) == 2 })
				if fg := foreground(t, master); fg != waiter.Cmd.Process.Pid {
					t.Fatalf("want leasewrap's group %d in the foreground while it waits, have %d", waiter.Cmd.Process.Pid, fg)
				}
				if interrupt {
					master.Write([]byte{0x03}) // ^C
					if have := waiter.wait(t); have != 130 {
						t.Fatalf("want 130 after ^C, have %d\n%s", have, &waiter.stderr)
					}
					waitFor(t, "the stopped child to be gone", func() bool { return len(processesWith(stat)) == 0 })
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

// leasewraps are those of pids that run this test binary (leasewrap, or
// its exec gate).
func leasewraps(pids []int) []int {
	var out []int
	for _, pid := range pids {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if argv0, _, _ := strings.Cut(string(b), "\x00"); argv0 == os.Args[0] {
			out = append(out, pid)
		}
	}
	return out
}
