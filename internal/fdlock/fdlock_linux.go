// Package fdlock is the one helper for flock(2) on an open descriptor (locks
// a child inherits, or that must stay on one descriptor): the try-lock, the
// bounded wait and the read-only liveness probe. Private path locks use
// gofrs/flock (docs/LOCKS.md). A flock belongs to the open file description:
// release a lock a child may share by closing, never with LOCK_UN.
package fdlock

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/ctxsleep"
	"github.com/leasewrap/leasewrap/internal/eintr"
)

// Flock applies how (LOCK_SH, LOCK_EX, LOCK_UN, optionally |LOCK_NB) to
// f's open file description, retrying EINTR.
func Flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		ferr = eintr.Retry(func() error { return unix.Flock(int(fd), how) })
	}); err != nil {
		return err
	}
	return ferr
}

// Try takes the lock how (LOCK_SH or LOCK_EX) without blocking: (true,
// nil) when obtained, (false, nil) when it would block.
func Try(f *os.File, how int) (bool, error) {
	err := Flock(f, how|unix.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EWOULDBLOCK):
		return false, nil
	}
	return false, err
}

// ErrTimeout is returned (wrapped by the caller as it likes) when a
// bounded wait ends without the lock.
var ErrTimeout = errors.New("fdlock: lock still held at the end of the bounded wait")

// Wait takes the lock how on f, trying every poll until budget passed
// (ErrTimeout, with the time waited) or ctx ends; now defaults to time.Now.
func Wait(ctx context.Context, f *os.File, how int, poll, budget time.Duration, now func() time.Time) (time.Duration, error) {
	if now == nil {
		now = time.Now
	}
	started := now()
	for {
		ok, err := Try(f, how)
		if err != nil {
			return now().Sub(started), err
		}
		if ok {
			return now().Sub(started), nil
		}
		waited := now().Sub(started)
		if waited >= budget {
			return waited, ErrTimeout
		}
		if err := ctxsleep.Sleep(ctx, min(poll, budget-waited)); err != nil {
			return now().Sub(started), err
		}
	}
}

// Probed is what Probe found at a lock file.
type Probed int

const (
	// Missing: no file at the path.
	Missing Probed = iota
	// Free: an exclusive try-lock was obtained (and dropped at once):
	// nobody holds the lock.
	Free
	// Held: the try-lock would block: someone holds the lock.
	Held
	// Unknown: the file could not be opened or locked, or is not a regular
	// file (a directory, a FIFO, or a symlink when refused).
	Unknown
)

// ProbeOpts says how Probe opens the file.
type ProbeOpts struct {
	// NoFollow refuses a symlink at the path (Unknown).
	NoFollow bool
}

// Probe is the try-lock liveness probe on path, opened read-only (a writable
// close would wake inotify waiters as if a holder let go) and never created;
// an obtained lock is released at once.
func Probe(path string, o ProbeOpts) (Probed, error) {
	flags := os.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC
	if o.NoFollow {
		flags |= unix.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return Missing, err
	}
	if err != nil {
		return Unknown, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Unknown, err
	}
	if !fi.Mode().IsRegular() {
		return Unknown, &fs.PathError{Op: "probe", Path: path, Err: errors.New("not a regular file")}
	}
	ok, err := Try(f, unix.LOCK_EX)
	switch {
	case err != nil:
		return Unknown, err
	case ok:
		_ = Flock(f, unix.LOCK_UN) // our own, unshared descriptor
		return Free, nil
	}
	return Held, nil
}
