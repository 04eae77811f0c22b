// Package fswatch is the wake-up source of the local lease kinds: inotify
// on the directory entries whose change may free a lease, plus a pidfd on a
// local holder's process. A Watcher is a lease.Wake.
package fswatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/eintr"
)

// Wake is what a Watcher and Preparing's wrapper are: the method set of
// lease.Wake, declared here because internal/ imports nothing above it.
type Wake interface {
	Wait(ctx context.Context, held error, limit time.Duration) (bool, error)
	Close() error
}

// Holder is implemented by a contention error that knows the holder's
// process (lease.HeldError): Wait then also wakes when a local holder exits.
type Holder interface {
	HolderProcess() (pid int, host string)
}

// Watch names a directory and the entries in it that matter; no Names
// means every entry.
type Watch struct {
	Dir   string
	Names []string
}

// Watcher wakes a waiter when a lease may have become free: a watched entry
// changed or a watched process exited. Events queue from New on, so create it
// before the first attempt. A Watcher is not safe for concurrent use.
type Watcher struct {
	fd    int                       // inotify descriptor, -1 when nothing could be watched
	ev    int                       // eventfd that wakes Wait when its context ends
	names map[int32]map[string]bool // per watch descriptor, the names that matter (nil: all)
	pidfd int                       // the watched holder process, -1 if none
	pids  map[int]bool              // pids already watched once (a fired pidfd stays readable)
}

// watchMask is every change that can free a lease, including a close after
// writing (the last close of a lock file's description drops its flock).
const watchMask = unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_CREATE | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// New watches ws. A directory that cannot be watched is skipped: Wait then
// degrades to its timeout, costing latency, never correctness.
func New(ws []Watch) (*Watcher, error) {
	ev, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("fswatch: eventfd: %w", err)
	}
	w := &Watcher{fd: -1, ev: ev, pidfd: -1, names: map[int32]map[string]bool{}, pids: map[int]bool{}}
	if len(ws) == 0 {
		return w, nil
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return w, nil // inotify unavailable (limits): poll instead
	}
	for _, x := range ws {
		wd, err := unix.InotifyAddWatch(fd, x.Dir, watchMask)
		if err != nil {
			continue
		}
		if len(x.Names) == 0 {
			w.names[int32(wd)] = nil
			continue
		}
		set, seen := w.names[int32(wd)]
		if seen && set == nil {
			continue // already watching every entry
		}
		if set == nil {
			set = map[string]bool{}
			w.names[int32(wd)] = set
		}
		for _, n := range x.Names {
			set[n] = true
		}
	}
	if len(w.names) == 0 {
		unix.Close(fd)
		return w, nil
	}
	w.fd = fd
	return w, nil
}

// WatchPID makes the next Wait also end when process pid exits; a fired
// pidfd is dropped (it stays readable). Errors only mean Wait times out.
func (w *Watcher) WatchPID(pid int) {
	if pid <= 0 || w.pids[pid] {
		return
	}
	w.pids[pid] = true
	w.closePID()
	if fd, err := unix.PidfdOpen(pid, 0); err == nil {
		unix.CloseOnExec(fd)
		w.pidfd = fd
	}
}

func (w *Watcher) closePID() {
	if w.pidfd >= 0 {
		unix.Close(w.pidfd)
		w.pidfd = -1
	}
}

var _ Wake = (*Watcher)(nil)

// Wait blocks until a watched entry changed, the holder named by held (a
// Holder with the pid of a process on this host) exited, limit passed, or
// ctx ended; it returns ctx.Err() only in the last case, and reports
// whether something happened (false: limit passed).
func (w *Watcher) Wait(ctx context.Context, held error, limit time.Duration) (bool, error) {
	var h Holder
	if errors.As(held, &h) {
		if pid, host := h.HolderProcess(); localHolder(pid, host) {
			w.WatchPID(pid) // its exit may free the lease
		}
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	deadline := time.Now().Add(limit)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	stop := context.AfterFunc(ctx, func() {
		one := [8]byte{1}
		unix.Write(w.ev, one[:])
	})
	defer stop()
	for {
		fds := []unix.PollFd{{Fd: int32(w.ev), Events: unix.POLLIN}}
		if w.fd >= 0 {
			fds = append(fds, unix.PollFd{Fd: int32(w.fd), Events: unix.POLLIN})
		}
		if w.pidfd >= 0 {
			fds = append(fds, unix.PollFd{Fd: int32(w.pidfd), Events: unix.POLLIN})
		}
		n, err := eintr.Retry2(func() (int, error) {
			return unix.Poll(fds, max(int(time.Until(deadline).Milliseconds()), 0))
		})
		if err != nil {
			return false, fmt.Errorf("fswatch: poll watcher: %w", err)
		}
		if n == 0 {
			return false, nil
		}
		if fds[0].Revents != 0 {
			var buf [8]byte
			unix.Read(w.ev, buf[:])
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
		woke := false
		for _, p := range fds[1:] {
			switch {
			case p.Revents == 0:
			case int(p.Fd) == w.pidfd:
				w.closePID()
				woke = true
			case int(p.Fd) == w.fd:
				woke = w.drain() || woke
			}
		}
		if woke {
			return true, nil
		}
	}
}

// drain reads the queued inotify events and reports whether any of them
// concerns a watched name.
func (w *Watcher) drain() bool {
	var buf [8192]byte
	relevant := false
	for {
		n, err := unix.Read(w.fd, buf[:])
		if n <= 0 || err != nil {
			return relevant
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			set, ok := w.names[ev.Wd]
			switch {
			case !ok:
				// IN_IGNORED of a removed watch, or overflow: wake to be safe.
				relevant = true
			case set == nil || ev.Len == 0:
				relevant = true
			default:
				if i := bytes.IndexByte(name, 0); i >= 0 {
					name = name[:i]
				}
				if set[string(name)] {
					relevant = true
				}
			}
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
	w.closePID()
	return nil
}

// localHolder reports whether a holder's pid names a process on this host
// (the kind said no host, or ours).
func localHolder(pid int, host string) bool {
	if pid <= 0 {
		return false
	}
	if host == "" {
		return true
	}
	ours, err := os.Hostname()
	return err == nil && ours == host
}

// Preparing wraps w so that prepare runs before every Wait blocks and drop
// at Close: work done while the lease is still held is off the hand-over
// path. prepare must be cheap when there is nothing left to do.
func Preparing(w Wake, prepare, drop func()) Wake {
	return &preparing{Wake: w, prepare: prepare, drop: drop}
}

type preparing struct {
	Wake
	prepare, drop func()
}

func (p *preparing) Wait(ctx context.Context, held error, limit time.Duration) (bool, error) {
	p.prepare()
	return p.Wake.Wait(ctx, held, limit)
}

func (p *preparing) Close() error {
	p.drop()
	return p.Wake.Close()
}
