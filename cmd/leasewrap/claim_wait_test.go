package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// processesWith lists the pids whose command line contains marker.
func processesWith(marker string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(marker)) && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// giveUp makes a waiter give up: once it waits, sig (0: its --wait runs
// out) ends it. It returns its exit code, 128+N for a death by signal N.
func giveUp(t *testing.T, waiter *proc, sig syscall.Signal) int {
	t.Helper()
	waitFor(t, "the waiter to wait", func() bool { return strings.Contains(waiter.stderr.String(), "lease held; waiting") })
	if sig != 0 {
		waiter.Cmd.Process.Signal(sig)
	}
	have := waiter.wait(t)
	if ws := waiter.Cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
		have = 128 + int(ws.Signal())
	}
	return have
}

// TestClaimWaiterStartsItsCommandAfterTheHolder: a claim waiter waits with
// no child process while the claim is held (the command never runs: the
// marker file stays absent) until the holder lets go; then its command
// runs. Every --anchor value (all mean the exec gate).
func TestClaimWaiterStartsItsCommandAfterTheHolder(t *testing.T) {
	for _, anchor := range anchors {
		t.Run(anchor, func(t *testing.T) {
			root, env := claimEnv(t)
			ready, gone, ran := filepath.Join(root, "ready"), filepath.Join(root, "gone"), filepath.Join(root, "ran")
			holder := startLW(t, env, "claim", "run", "job", "--root", root, "--anchor", anchor, "--", "sh", "-c", holdUntil(ready, gone))
			waitFor(t, "the holder's child", func() bool { return exists(ready) })
			waiter := startLW(t, env, "claim", "run", "job", "--root", root, "--anchor", anchor, "--wait", "30s", "--", "touch", ran)
			waitFor(t, "the waiter to wait", func() bool { return strings.Contains(waiter.stderr.String(), "lease held; waiting") })
			if kids := childrenOf(waiter.Cmd.Process.Pid); len(kids) != 0 {
				t.Fatalf("want no child process of a waiting leasewrap, have %v", kids)
			}
			if exists(ran) {
				t.Fatal("the waiter's command ran while the claim was held")
			}
			os.WriteFile(gone, nil, 0o644)
			if have := holder.wait(t); have != 0 {
				t.Fatalf("holder: want 0, have %d\n%s", have, &holder.stderr)
			}
			if have := waiter.wait(t); have != 0 {
				t.Fatalf("waiter: want 0, have %d\n%s", have, &waiter.stderr)
			}
			if !exists(ran) {
				t.Fatal("the waiter exited 0 without running its command")
			}
		})
	}
}

// TestClaimWaiterGivingUpRunsNothing: a claim waiter that gives up (its
// --wait runs out, SIGTERM → 143, SIGKILL) leaves no process behind
// and never runs its command, even after the holder lets go; the claim is
// free for the next run.
func TestClaimWaiterGivingUpRunsNothing(t *testing.T) {
	for _, anchor := range anchors {
		for _, tc := range []struct {
			name string
			wait string
			sig  syscall.Signal
			want int
		}{
			{"wait runs out", "300ms", 0, 75},
			{"SIGTERM", "30s", syscall.SIGTERM, 128 + int(syscall.SIGTERM)},
			{"SIGKILL", "30s", syscall.SIGKILL, 128 + int(syscall.SIGKILL)},
		} {
			t.Run(anchor+"/"+tc.name, func(t *testing.T) {
				root, env := claimEnv(t)
				ready, gone, ran := filepath.Join(root, "ready"), filepath.Join(root, "gone"), filepath.Join(root, "ran-marker")
				holder := startLW(t, env, "claim", "run", "job", "--root", root, "--anchor", anchor, "--", "sh", "-c", holdUntil(ready, gone))
				waitFor(t, "the holder's child", func() bool { return exists(ready) })
				waiter := startLW(t, env, "claim", "run", "job", "--root", root, "--anchor", anchor, "--wait", tc.wait, "--", "touch", ran)
				if have := giveUp(t, waiter, tc.sig); have != tc.want {
					t.Fatalf("waiter: want %d, have %d\n%s", tc.want, have, &waiter.stderr)
				}
				waitFor(t, "the waiter to be gone", func() bool { return len(processesWith(ran)) == 0 })
				os.WriteFile(gone, nil, 0o644)
				if have := holder.wait(t); have != 0 {
					t.Fatalf("holder: want 0, have %d\n%s", have, &holder.stderr)
				}
				if len(processesWith(ran)) != 0 || exists(ran) {
					t.Fatal("the command of a waiter that gave up ran")
				}
				if have, p := runLW(t, env, "claim", "run", "job", "--root", root, "--", "true"); have != 0 {
					t.Fatalf("the claim is not free after the waiter gave up: %d\n%s", have, &p.stderr)
				}
			})
		}
	}
}
