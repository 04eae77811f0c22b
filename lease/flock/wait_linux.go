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

// kernelWait is the flock kind's wake-up source: a blocking flock(2) on the
// Locker's open file description (flock(1) -w), granted the moment the holder
// closes or unlocks. The call cannot be cancelled, so it runs on a duplicate
// descriptor and is abandoned when its waiter gives up; a late grant is
// released by that duplicate's close.
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

// Notify opens the lock file and returns the kernel's wait on it (kernelWait);
// the blocking call starts at the first Wait.
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

// Wait starts the blocking flock(2) once, then waits for its outcome, limit or
// ctx. Either outcome is a wake-up; after a failed call Waits sleep their limit.
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
		// The one goroutine outside an actor: a kernel call nothing can interrupt,
		// abandoned when its waiter gives up.
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

// Grants reports whether the blocking call still waits (or has yet to start):
// no attempt can take the lock until it returns.
func (w *kernelWait) Grants() bool { return !w.over }

// Close closes the duplicate unless the blocking call owns it; idempotent.
func (w *kernelWait) Close() error {
	if !w.started && w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
	return nil
}
