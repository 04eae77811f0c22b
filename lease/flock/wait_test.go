package flock

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/lease"
)

// holdLock takes path's lock on a Locker of its own and returns its lease.
func holdLock(t *testing.T, path string, shared bool) lease.Lease {
	t.Helper()
	ls, err := newLocker(t, path, shared).Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ls.Finish(context.Background(), lease.Result{}) })
	return ls
}

// waitHeld returns l's wake-up source after an attempt that found the
// lock held, and that attempt's error.
func waitHeld(t *testing.T, l *Locker) (lease.Wake, error) {
	t.Helper()
	w, err := l.Notify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	_, held := l.Acquire(context.Background())
	if !errors.Is(held, lease.ErrHeld) {
		t.Fatalf("want held, have %v", held)
	}
	return w, held
}

// TestWaitWakesOnUnlockWithoutClose: the holder unlocks (LOCK_UN) and
// keeps its descriptor open, which no file event shows; the kernel's wait
// grants the lock to the waiter's descriptor, so the next Acquire takes it
// while the holder's descriptor is still open. Both modes.
func TestWaitWakesOnUnlockWithoutClose(t *testing.T) {
	for _, shared := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "u.lock")
		holder := holdLock(t, path, false)
		l := newLocker(t, path, shared)
		w, held := waitHeld(t, l)
		if woke, err := w.Wait(context.Background(), held, time.Millisecond); woke || err != nil {
			t.Fatalf("shared=%v: want the limit to pass while held, have woke=%v err=%v", shared, woke, err)
		}
		fd := int(holder.(lease.FileHolder).File().Fd())
		if err := unix.Flock(fd, unix.LOCK_UN); err != nil {
			t.Fatal(err)
		}
		if woke, err := w.Wait(context.Background(), held, time.Minute); !woke || err != nil {
			t.Fatalf("shared=%v: want woken by the unlock, have woke=%v err=%v", shared, woke, err)
		}
		ls, err := l.Acquire(context.Background())
		if err != nil {
			t.Fatalf("shared=%v: after the wake: %v", shared, err)
		}
		if ok, _ := tryOther(t, path); ok {
			t.Fatalf("shared=%v: the lock is free after the waiter took it", shared)
		}
		ls.Finish(context.Background(), lease.Result{})
	}
}

// tryOther tries path's lock exclusively on a descriptor of its own.
func tryOther(t *testing.T, path string) (bool, lease.Lease) {
	t.Helper()
	ls, err := newLocker(t, path, false).Acquire(context.Background())
	if err != nil {
		if !errors.Is(err, lease.ErrHeld) {
			t.Fatal(err)
		}
		return false, nil
	}
	ls.Finish(context.Background(), lease.Result{})
	return true, ls
}

// TestWaitGivenUpLeavesNoLock: a waiter whose context ends while the
// kernel's wait is blocked, and that then closes its Locker, holds
// nothing: the grant that comes when the holder lets go is released at
// once by the abandoned call, and a third process-like Locker takes the
// lock. A waiter that gave up but kept its Locker open finds the lock on
// its own descriptor at its next Acquire.
func TestWaitGivenUpLeavesNoLock(t *testing.T) {
	for _, closeLocker := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "g.lock")
		holder := holdLock(t, path, false)
		l := newLocker(t, path, false)
		w, held := waitHeld(t, l)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(20 * time.Millisecond); cancel() }()
		if woke, err := w.Wait(ctx, held, time.Minute); woke || !errors.Is(err, context.Canceled) {
			t.Fatalf("want the context's end, have woke=%v err=%v", woke, err)
		}
		w.Close()
		if closeLocker {
			l.Close()
		}
		unix.Flock(int(holder.(lease.FileHolder).File().Fd()), unix.LOCK_UN)
		if closeLocker {
			testutil.WaitFor(t, "the lock to be free", 10*time.Second, func() bool { ok, _ := tryOther(t, path); return ok })
			continue
		}
		testutil.WaitFor(t, "the grant to the waiter's descriptor", 10*time.Second, func() bool {
			ls, err := l.Acquire(context.Background())
			if err == nil {
				ls.Finish(context.Background(), lease.Result{})
			}
			return err == nil
		})
	}
}
