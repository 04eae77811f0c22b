package reserve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Defaults of the per-key lock wait. The lock is only ever held for one
// read-decide-write step, so a long wait means something is wrong.
const (
	defaultLockTimeout = 10 * time.Second
	lockPoll           = 2 * time.Millisecond
	maxLockPoll        = 25 * time.Millisecond
)

// withKeyLock runs fn holding the exclusive flock on lockPath (created if
// needed, never through a symlink). The wait is bounded by ctx and by
// timeout. The lock is released by closing the descriptor.
func withKeyLock(ctx context.Context, lockPath string, timeout time.Duration, fn func() error) error {
	dir := filepath.Dir(lockPath)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("reserve: mkdir %s: %w", dir, err)
	}
	f, err := openNoFollow(lockPath, os.O_RDWR|os.O_CREATE)
	if err != nil {
		var re *RecordError
		if errors.As(err, &re) {
			return err
		}
		return fmt.Errorf("reserve: open key lock %s: %w", lockPath, err)
	}
	defer f.Close()
	if timeout <= 0 {
		timeout = defaultLockTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	wait := lockPoll
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("reserve: lock %s: %w", lockPath, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: %s still locked after %v (another process is stuck holding it?): %v",
				ErrLockTimeout, lockPath, timeout, ctx.Err())
		case <-t.C:
		}
		if wait < maxLockPoll {
			wait *= 2
		}
	}
	return fn()
}
