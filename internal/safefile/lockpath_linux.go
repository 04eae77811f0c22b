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

// lockPathFlags open a path lock as the peers do (create, read-write,
// never truncate), plus O_NOFOLLOW and O_NONBLOCK so a planted symlink or
// FIFO is refused, not followed or hung on. Go adds O_CLOEXEC: a path
// lock is never inherited.
const lockPathFlags = os.O_RDWR | os.O_CREATE | unix.O_NOFOLLOW | unix.O_NONBLOCK

// LockPath takes a flock on the lock file at path (created with perm,
// before the umask, when missing), shared or exclusive, for a lock this
// process holds alone and takes by path: a gofrs/flock lock (see
// docs/LOCKS.md). The file must be a regular file with exactly one link:
// anything planted (symlink, FIFO, hard link to another file) is an
// *UnsafeError and is never locked. The wait polls every poll for at most
// budget; past it the error matches fdlock.ErrTimeout, and when ctx ends
// first it is ctx's error. Release with Close (the descriptor is the
// caller's alone).
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
