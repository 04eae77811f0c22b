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

// Defaults of the per-key lock wait. The lock is only ever held for one
// read-decide-write step, so a long wait means something is wrong.
const (
	defaultLockTimeout = 10 * time.Second
	lockPoll           = 5 * time.Millisecond
)

// withKeyLock runs fn holding the exclusive flock on lockPath (created if
// needed with the peers' mode, never through a symlink). The wait is
// bounded by ctx and by timeout. The key lock is private to this process
// and taken by path, so it is a gofrs/flock lock (safefile.LockPath:
// orchestratectl's flags, create, read-write, never truncate, O_NOFOLLOW,
// plus O_NONBLOCK so a planted FIFO is refused; see docs/LOCKS.md).
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
