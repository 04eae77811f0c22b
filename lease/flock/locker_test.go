package flock

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/lease"
)

func newLocker(t *testing.T, path string, shared bool) *Locker {
	t.Helper()
	l, err := NewLocker(Config{Path: path, Shared: shared, Holder: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestAcquireExcludesAndReleasesOnFinish: two Lockers (two open file
// descriptions, as two processes have) exclude each other; Finish frees
// the lock by closing, and the contention error matches lease.ErrHeld and
// names this process's pid from /proc/locks.
func TestAcquireExcludesAndReleasesOnFinish(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	a, b := newLocker(t, path, false), newLocker(t, path, false)
	ls, err := a.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Acquire(context.Background())
	var h *lease.HeldError
	if !errors.As(err, &h) || !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("want a *lease.HeldError, have %v", err)
	}
	if h.Key != path || h.PID != os.Getpid() {
		t.Fatalf("want key %s and pid %d, have %+v", path, os.Getpid(), h)
	}
	if ls.(lease.FileHolder).File() == nil || ls.TTL() != 0 || ls.Renew(context.Background()) != nil {
		t.Fatal("a held flock must hand over its descriptor, have no TTL and always renew")
	}
	if err := ls.Finish(context.Background(), lease.Result{}); err != nil {
		t.Fatal(err)
	}
	ls2, err := b.Acquire(context.Background())
	if err != nil {
		t.Fatalf("after Finish: %v", err)
	}
	ls2.Finish(context.Background(), lease.Result{})
}

// TestSharedLockers share; an exclusive one is refused meanwhile.
func TestSharedLockers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.lock")
	s1, s2, x := newLocker(t, path, true), newLocker(t, path, true), newLocker(t, path, false)
	l1, err := s1.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer l1.Finish(context.Background(), lease.Result{})
	l2, err := s2.Acquire(context.Background())
	if err != nil {
		t.Fatalf("second shared: %v", err)
	}
	defer l2.Finish(context.Background(), lease.Result{})
	if _, err := x.Acquire(context.Background()); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("exclusive under shared: want held, have %v", err)
	}
}

// TestNotifyWakesOnFlock1Release: a waiter is woken by the release of a
// lock flock(1) held (the last close of its read-only descriptor), not by
// its own time limit.
func TestNotifyWakesOnFlock1Release(t *testing.T) {
	_, err := exec.LookPath("flock")
	testutil.Need(t, "flock(1) (util-linux)", err)
	dir := t.TempDir()
	path := filepath.Join(dir, "w.lock")
	ready, gone := filepath.Join(dir, "ready"), filepath.Join(dir, "gone")
	testutil.Start(t, exec.Command("flock", path, "sh", "-c", "touch "+ready+"; while [ ! -e "+gone+" ] && [ -d "+dir+" ]; do sleep 0.02; done"))
	testutil.WaitFor(t, "flock(1) to hold", 10*time.Second, func() bool { _, err := os.Stat(ready); return err == nil })
	l := newLocker(t, path, false)
	w, err := l.Notify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	_, held := l.Acquire(context.Background())
	if !errors.Is(held, lease.ErrHeld) {
		t.Fatalf("want held, have %v", held)
	}
	os.WriteFile(gone, nil, 0o644)
	woke, err := w.Wait(context.Background(), held, 30*time.Second)
	if err != nil || !woke {
		t.Fatalf("want woken by the release, have woke=%v err=%v", woke, err)
	}
	// The close is reported just before the kernel drops the lock: the
	// next attempts may need a moment.
	testutil.WaitFor(t, "the lock", 10*time.Second, func() bool {
		ls, err := l.Acquire(context.Background())
		if err == nil {
			ls.Finish(context.Background(), lease.Result{})
		}
		return err == nil
	})
}

// TestLockHolderParsesProcLocks reads the kernel's table format, skipping
// blocked waiters and POSIX locks.
func TestLockHolderParsesProcLocks(t *testing.T) {
	table := filepath.Join(t.TempDir(), "locks")
	os.WriteFile(table, []byte(""+
		"1: POSIX  ADVISORY  WRITE 10 fe:00:42 0 EOF\n"+
		"2: FLOCK  ADVISORY  WRITE 11 fe:00:4200 0 EOF\n"+
		"2: -> FLOCK  ADVISORY  WRITE 12 fe:00:42 0 EOF\n"+
		"3: FLOCK  ADVISORY  READ 13 fe:00:42 0 EOF\n"), 0o644)
	dev := unix.Mkdev(0xfe, 0)
	pid, mode, ok := lockHolder(table, dev, 42)
	if !ok || pid != 13 || mode != "shared" {
		t.Fatalf("want pid 13 shared, have %d %q %v", pid, mode, ok)
	}
	if _, _, ok := lockHolder(table, dev, 7); ok {
		t.Fatal("found a lock on an inode not in the table")
	}
}

// TestNewLockerRefusesMistakes names the path in each error.
func TestNewLockerRefusesMistakes(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{dir, filepath.Join(dir, "missing", "x.lock")} {
		if _, err := NewLocker(Config{Path: p, Holder: "h"}); err == nil {
			t.Fatalf("%s: want an error", p)
		}
	}
	if _, err := NewLocker(Config{Path: "", Holder: "h"}); err == nil {
		t.Fatal("empty path: want an error")
	}
}
