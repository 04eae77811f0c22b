package flock

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/ctxsleep"
	"github.com/leasewrap/leasewrap/internal/eintr"
	"github.com/leasewrap/leasewrap/lease"
)

// kernelWait is the flock kind's wake-up source: a blocking flock(2) on
// the Locker's own open file description, the wait flock(1) -w makes. The
// kernel grants the lock the moment the holder lets go, whether it closes
// its descriptor or unlocks it with LOCK_UN (flock -u, which no file
// event shows), so the next Acquire finds the lock already on its
// descriptor.
//
// The blocking call cannot be cancelled (Go restarts it after a signal),
// so it is abandoned instead: it runs in a goroutine of its own on a
// duplicate of the descriptor (the same open file description, so a
// grant is the Locker's lock) and closes that duplicate as soon as it
// returns. A waiter that gives up leaves it blocked: leasewrap then exits,
// and a library caller that closes its Locker has closed the description
// but for that duplicate, so a grant that comes after giving up is
// released by the goroutine's own close at once. Nothing that gave up
// ever holds the lock past that.
type kernelWait struct {
	fd      int        // duplicate of the Locker's descriptor, owned by the blocking call once it starts
	how     int        // LOCK_EX or LOCK_SH
	done    chan error // buffered: an abandoned call never blocks on it
	started bool       // the blocking call is under way (or over)
	over    bool       // its outcome was taken: later Waits only sleep
}

var (
	_ lease.Wake    = (*kernelWait)(nil)
	_ lease.Granter = (*kernelWait)(nil)
)

// Notify opens the lock file if no attempt has yet and returns the
// kernel's own wait on it (see kernelWait). It is called before the first
// attempt; the blocking call starts at the first Wait.
func (l *Locker) Notify(context.Context) (lease.Wake, error) {
	if _, err := l.file(); err != nil {
		return nil, err
	}
	rc, err := l.f.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("flock %s: %w", l.path, err)
	}
	fd := -1
	var derr error
	if err := rc.Control(func(f uintptr) {
		fd, derr = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, fmt.Errorf("flock %s: %w", l.path, err)
	}
	if derr != nil {
		return nil, fmt.Errorf("flock %s: duplicate the descriptor to wait on: %w", l.path, derr)
	}
	how := unix.LOCK_EX
	if l.shared {
		how = unix.LOCK_SH
	}
	return &kernelWait{fd: fd, how: how, done: make(chan error, 1)}, nil
}

// Wait starts the blocking flock(2) at its first call, then waits for its
// outcome, limit or ctx. The outcome is a wake-up either way: a grant
// makes the next Acquire succeed, and a failed call (which leaves the lock
// untaken) makes later Waits sleep their limit, as a kind without a
// wake-up source is polled.
func (w *kernelWait) Wait(ctx context.Context, _ error, limit time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if w.over {
		if err := ctxsleep.Sleep(ctx, limit); err != nil {
			return false, err
		}
		return false, nil
	}
	if !w.started {
		w.started = true
		fd, how, done := w.fd, w.how, w.done
		// The one exception to "every goroutine is an actor": a call
		// blocked in the kernel that nothing can interrupt, abandoned when
		// its waiter gives up (see kernelWait).
		go func() {
			err := eintr.Retry(func() error { return unix.Flock(fd, how) })
			unix.Close(fd) // the Locker's descriptor keeps a granted lock
			done <- err
		}()
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-w.done:
		w.over = true
		return true, nil
	case <-t.C:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// Grants reports whether the blocking call still waits for the lock (or
// has yet to start): until it returns, no attempt can take it.
func (w *kernelWait) Grants() bool { return !w.over }

// Close closes the duplicate descriptor unless the blocking call owns it
// (it closes it when it returns). It is idempotent.
func (w *kernelWait) Close() error {
	if !w.started && w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
	return nil
}
