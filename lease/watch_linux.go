package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// Watcher reports changes in a set of directories, so a waiter can retry
// an acquisition the moment a holder lets go instead of sleeping through it.
// Events are queued from NewWatcher on: create the Watcher before the first
// attempt and no release between an attempt and the next Wait is missed.
//
// A Watcher is not safe for concurrent use.
type Watcher struct {
	fd int // inotify descriptor, -1 when no directory could be watched
	ev int // eventfd that wakes Wait when its context ends
}

// watchMask is every change that can free a lease: a record removed,
// renamed away or into place, rewritten, or a lock file closed.
const watchMask = unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_CREATE | unix.IN_CLOSE_WRITE | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF

// NewWatcher watches dirs. Directories that do not exist (yet) or cannot be
// watched are skipped: Wait then degrades to its timeout, which callers
// bound, so a missing watch costs latency, never correctness.
func NewWatcher(dirs []string) (*Watcher, error) {
	ev, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("lease: eventfd: %w", err)
	}
	w := &Watcher{fd: -1, ev: ev}
	if len(dirs) == 0 {
		return w, nil
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return w, nil // inotify unavailable (limits): poll instead
	}
	watched := 0
	for _, d := range dirs {
		if _, err := unix.InotifyAddWatch(fd, d, watchMask); err == nil {
			watched++
		}
	}
	if watched == 0 {
		unix.Close(fd)
		return w, nil
	}
	w.fd = fd
	return w, nil
}

// Wait blocks until a watched directory changed, max passed, or ctx ended;
// it returns ctx.Err() only in the last case. Queued events are drained, so
// one change wakes one Wait.
func (w *Watcher) Wait(ctx context.Context, max time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < max {
		max = time.Until(d)
	}
	stop := context.AfterFunc(ctx, func() {
		var one = [8]byte{1}
		unix.Write(w.ev, one[:])
	})
	defer stop()

	fds := []unix.PollFd{{Fd: int32(w.ev), Events: unix.POLLIN}}
	if w.fd >= 0 {
		fds = append(fds, unix.PollFd{Fd: int32(w.fd), Events: unix.POLLIN})
	}
	deadline := time.Now().Add(max)
	for {
		ms := int(time.Until(deadline).Milliseconds())
		if ms < 0 {
			ms = 0
		}
		n, err := unix.Poll(fds, ms)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("lease: poll watcher: %w", err)
		}
		if n == 0 {
			return nil
		}
		if fds[0].Revents != 0 {
			var buf [8]byte
			unix.Read(w.ev, buf[:])
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if len(fds) > 1 && fds[1].Revents != 0 {
			w.drain()
			return nil
		}
	}
}

func (w *Watcher) drain() {
	var buf [4096]byte
	for {
		if n, err := unix.Read(w.fd, buf[:]); n <= 0 || err != nil {
			return
		}
	}
}

// Close releases the watcher's descriptors. It is idempotent.
func (w *Watcher) Close() error {
	if w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
	if w.ev >= 0 {
		unix.Close(w.ev)
		w.ev = -1
	}
	return nil
}
