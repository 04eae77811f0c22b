package reserve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/safefile"
)

// Defaults of the per-key lock wait. The lock is only ever held for one
// read-decide-write step, so a long wait means something is wrong.
const (
	defaultLockTimeout = 10 * time.Second
	lockPoll           = 5 * time.Millisecond
)

// keyLockFlags are the open flags of the key lock: those of orchestratectl
// (create, read-write, never truncate, O_NOFOLLOW) plus O_NONBLOCK, so a
// FIFO planted at the path is refused instead of hanging the open. Go adds
// O_CLOEXEC: the key lock is never inherited.
const keyLockFlags = os.O_RDWR | os.O_CREATE | unix.O_NOFOLLOW | unix.O_NONBLOCK

// withKeyLock runs fn holding the exclusive flock on lockPath (created if
// needed with the peers' mode, never through a symlink). The wait is
// bounded by ctx and by timeout. The key lock is private to this process
// and taken by path, so it is a gofrs/flock lock (see docs/LOCKS.md).
func withKeyLock(ctx context.Context, lockPath string, timeout time.Duration, fn func() error) error {
	dir := filepath.Dir(lockPath)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("reserve: mkdir %s: %w", dir, err)
	}
	if timeout <= 0 {
		timeout = defaultLockTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	l := flock.New(lockPath, flock.SetFlag(keyLockFlags), flock.SetPermissions(fileMode))
	ok, err := l.TryLockContext(ctx, lockPoll)
	if err != nil && ctx.Err() == nil {
		err = safefile.OpenError(lockPath, err)
	}
	var ue *safefile.UnsafeError
	switch {
	case errors.As(err, &ue):
		return unsafeKeyLock(lockPath, ue)
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("%w: %s still locked after %v (another process is stuck holding it?): %v",
			ErrLockTimeout, lockPath, timeout, ctx.Err())
	case err != nil:
		return fmt.Errorf("reserve: lock %s: %w", lockPath, err)
	case !ok:
		return fmt.Errorf("reserve: lock %s: not obtained", lockPath)
	}
	defer l.Close() // the descriptor is ours alone: unlock and close
	fi, err := l.Stat()
	if err != nil {
		return fmt.Errorf("reserve: stat key lock %s: %w", lockPath, err)
	}
	if err := safefile.CheckOpened(fi, lockPath); errors.As(err, &ue) {
		return unsafeKeyLock(lockPath, ue)
	}
	return fn()
}

func unsafeKeyLock(path string, ue *safefile.UnsafeError) error {
	return &RecordError{Path: path, Reason: ErrUnsafePath,
		Detail: ue.What + "; leasewrap does not follow, write or lock through it. Check who created it, remove it by hand if it is not meant to be there"}
}
