package safefile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/gofrs/flock"
	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/fdlock"
)

// lockPathFlags open a path lock as the peers do, plus O_NOFOLLOW and
// O_NONBLOCK so a planted symlink or FIFO is refused (Go adds O_CLOEXEC).
const lockPathFlags = os.O_RDWR | os.O_CREATE | unix.O_NOFOLLOW | unix.O_NONBLOCK

// LockPath takes a shared or exclusive gofrs/flock lock on the lock file at
// path (created with perm if missing; docs/LOCKS.md). Anything but a regular
// file with one link is an *UnsafeError, never locked. It polls every poll
// for at most budget (then fdlock.ErrTimeout) or until ctx ends. Release
// with Close.
func LockPath(ctx context.Context, path string, shared bool, perm fs.FileMode, poll, budget time.Duration) (*flock.Flock, error) {
	l := flock.New(path, flock.SetFlag(lockPathFlags), flock.SetPermissions(perm))
	try := l.TryLockContext
	if shared {
		try = l.TryRLockContext
	}
	wctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	ok, err := try(wctx, poll)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil && wctx.Err() != nil:
		return nil, fmt.Errorf("%w: %s after %v", fdlock.ErrTimeout, path, budget)
	case err != nil:
		return nil, OpenError(path, err)
	case !ok:
		return nil, fmt.Errorf("lock %s: not obtained", path)
	}
	fi, err := l.Stat()
	if err == nil {
		err = CheckOpened(fi, path)
	}
	if err != nil {
		l.Close()
		var ue *UnsafeError
		if !errors.As(err, &ue) {
			err = fmt.Errorf("stat lock file %s: %w", path, err)
		}
		return nil, err
	}
	return l, nil
}
