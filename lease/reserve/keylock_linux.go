package reserve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leasewrap/leasewrap/internal/fdlock"
	"github.com/leasewrap/leasewrap/internal/safefile"
)

// Per-key lock wait defaults: the lock is held for one step only.
const (
	defaultLockTimeout = 10 * time.Second
	lockPoll           = 5 * time.Millisecond
)

// withKeyLock runs fn holding the exclusive flock on lockPath, waiting at most
// timeout. It is private to this process, so a gofrs/flock lock (safefile.LockPath,
// no symlink, no FIFO; see docs/LOCKS.md).
func withKeyLock(ctx context.Context, lockPath string, timeout time.Duration, fn func() error) error {
	dir := filepath.Dir(lockPath)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("reserve: mkdir %s: %w", dir, err)
	}
	if timeout <= 0 {
		timeout = defaultLockTimeout
	}
	l, err := safefile.LockPath(ctx, lockPath, false, fileMode, lockPoll, timeout)
	var ue *safefile.UnsafeError
	switch {
	case errors.As(err, &ue):
		return unsafeKeyLock(lockPath, ue)
	case errors.Is(err, fdlock.ErrTimeout):
		return fmt.Errorf("%w: %s still locked after %v (another process is stuck holding it?)", ErrLockTimeout, lockPath, timeout)
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("%w: %s: %v", ErrLockTimeout, lockPath, ctx.Err())
	case err != nil:
		return fmt.Errorf("reserve: lock %s: %w", lockPath, err)
	}
	defer l.Close() // the descriptor is ours alone: unlock and close
	return fn()
}

func unsafeKeyLock(path string, ue *safefile.UnsafeError) error {
	return &RecordError{Path: path, Reason: ErrUnsafePath,
		Detail: ue.What + "; leasewrap does not follow, write or lock through it. Check who created it, remove it by hand if it is not meant to be there"}
}
