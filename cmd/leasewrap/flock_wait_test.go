package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// shellHolder starts a shell that takes path's lock with flock(1) on its
// descriptor 9, creates ready, and at release lets go by the idiom given
// ("exec 9<&-": close; "flock -u 9": unlock and keep the descriptor open),
// creates released, then keeps running until gone exists.
func shellHolder(t *testing.T, path, release, ready, released, gone, end string) *testutil.Proc {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	script := `exec 9<"$1" && flock 9 && touch "$2" && ` + waitUntil(release) + ` && ` + end + ` && touch "$3" && ` + waitUntil(gone)
	p := testutil.Start(t, exec.Command("sh", "-c", script, "sh", path, ready, released))
	t.Cleanup(func() {
		os.WriteFile(release, nil, 0o644)
		os.WriteFile(gone, nil, 0o644)
		<-p.Done()
	})
	waitFor(t, "the shell holder's lock", func() bool { return exists(ready) })
	return p
}

// TestFlockWaitWakesInBothIdioms: a flock kind waiter takes the lock as
// soon as a flock(1) holder lets go, whether it closes its descriptor or
// unlocks it with `flock -u` and keeps it open (no file event, no exit to
// see: only the kernel's wait wakes it). The holder still runs, its
// descriptor open, when the waiter's command has run.
func TestFlockWaitWakesInBothIdioms(t *testing.T) {
	needFlock1(t)
	for _, tc := range []struct{ name, end string }{
		{"holder closes", "exec 9<&-"},
		{"holder unlocks with flock -u", "flock -u 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			lock := filepath.Join(dir, "job.lock")
			ready, release, released, gone := filepath.Join(dir, "ready"), filepath.Join(dir, "release"), filepath.Join(dir, "released"), filepath.Join(dir, "gone")
			holder := shellHolder(t, lock, release, ready, released, gone, tc.end)
			ran := filepath.Join(dir, "ran")
			waiter := startLW(t, nil, "flock", "run", lock, "--wait", "30s", "--", "touch", ran)
			waitFor(t, "the waiter to wait", func() bool { return strings.Contains(waiter.stderr.String(), "lease held; waiting") })
			if exists(ran) {
				t.Fatal("the waiter ran its command while the holder held the lock")
			}
			os.WriteFile(release, nil, 0o644)
			if have := waiter.wait(t); have != 0 {
				t.Fatalf("waiter: want 0, have %d\n%s", have, &waiter.stderr)
			}
			if !exists(ran) {
				t.Fatal("the waiter exited 0 without running its command")
			}
			waitFor(t, "the holder to let go", func() bool { return exists(released) })
			select {
			case <-holder.Done():
				t.Fatal("the holder exited: the waiter was not woken by the release alone")
			default:
			}
		})
	}
}

// TestFlockWaitLeasewrapHolderFlock1Waiter: flock(1) -w waits behind a
// leasewrap holder and runs when its command exits.
func TestFlockWaitLeasewrapHolderFlock1Waiter(t *testing.T) {
	needFlock1(t)
	dir := t.TempDir()
	lock := filepath.Join(dir, "job.lock")
	ready, gone, ran := filepath.Join(dir, "ready"), filepath.Join(dir, "gone"), filepath.Join(dir, "ran")
	p := startLW(t, nil, "flock", "run", lock, "--", "sh", "-c", holdUntil(ready, gone))
	waitFor(t, "leasewrap's command", func() bool { return exists(ready) })
	w := testutil.Start(t, exec.Command("flock", "-w", "30", lock, "touch", ran))
	os.WriteFile(gone, nil, 0o644)
	if have := p.wait(t); have != 0 {
		t.Fatalf("holder: want 0, have %d\n%s", have, &p.stderr)
	}
	<-w.Done()
	if code := w.Cmd.ProcessState.ExitCode(); code != 0 || !exists(ran) {
		t.Fatalf("flock -w: want 0 and its command run, have %d", code)
	}
}

// TestFlockWaitGivingUpLeavesNothing: a waiter blocked in the kernel's
// wait that gives up (its --wait runs out, a signal, SIGKILL) runs
// nothing, leaves no process and
// holds nothing afterwards: when the holder then lets go by `flock -u`
// (no close anywhere), flock -n gets the lock.
func TestFlockWaitGivingUpLeavesNothing(t *testing.T) {
	needFlock1(t)
	for _, tc := range []struct {
		name string
		wait string
		sig  syscall.Signal // 0: the wait runs out
		want int
	}{
		{"wait runs out", "300ms", 0, 75},
		{"SIGTERM", "30s", syscall.SIGTERM, 128 + int(syscall.SIGTERM)},
		{"SIGINT", "30s", syscall.SIGINT, 128 + int(syscall.SIGINT)},
		{"SIGHUP", "30s", syscall.SIGHUP, 128 + int(syscall.SIGHUP)},
		{"SIGKILL", "30s", syscall.SIGKILL, 128 + int(syscall.SIGKILL)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			lock := filepath.Join(dir, "job.lock")
			ready, release, released, gone := filepath.Join(dir, "ready"), filepath.Join(dir, "release"), filepath.Join(dir, "released"), filepath.Join(dir, "gone")
			shellHolder(t, lock, release, ready, released, gone, "flock -u 9")
			ran := filepath.Join(dir, "ran-marker")
			waiter := startLW(t, nil, "flock", "run", lock, "--wait", tc.wait, "--log-level", "debug", "--", "touch", ran)
			if have := giveUp(t, waiter, tc.sig); have != tc.want {
				t.Fatalf("waiter: want %d, have %d\n%s", tc.want, have, &waiter.stderr)
			}
			if !strings.Contains(waiter.stderr.String(), "waiting for the grant") {
				t.Fatalf("the waiter did not block in flock(2)\n%s", &waiter.stderr)
			}
			waitFor(t, "the waiter to be gone", func() bool { return len(processesWith(ran)) == 0 })
			os.WriteFile(release, nil, 0o644)
			waitFor(t, "the holder's flock -u", func() bool { return exists(released) })
			if !flockN(t, "-x", lock) {
				t.Fatal("the lock is held after the holder unlocked it and the waiter gave up")
			}
			if exists(ran) {
				t.Fatal("a waiter that gave up ran its command")
			}
		})
	}
}
