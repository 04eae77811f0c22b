package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	gofrs "github.com/gofrs/flock"

	"github.com/leasewrap/leasewrap/internal/fdlock"
	"github.com/leasewrap/leasewrap/internal/safefile"
)

// lockPrivate takes how (lockSH or lockEX) on the lock file at path with
// the seed's bounded wait, for a lock this process holds alone and releases
// itself: the coordinator while registering an owner or under the write
// lock, and the write lock. They are taken by path and never handed to a
// child, so they are gofrs/flock locks (safefile.LockPath: the seed's
// open_lock_file flags plus O_NOFOLLOW and O_NONBLOCK); a lock a child
// inherits goes through lockFile (internal/fdlock). See docs/LOCKS.md.
func (s *Store) lockPrivate(ctx context.Context, path string, how int) (*gofrs.Flock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return nil, &IOError{Op: "create directory", Path: filepath.Dir(path), Err: err}
	}
	started := s.now()
	l, err := safefile.LockPath(ctx, path, how == lockSH, 0o666, s.lockPoll, s.lockBudget)
	var ue *safefile.UnsafeError
	switch {
	case err == nil:
		return l, nil
	case errors.As(err, &ue):
		return nil, unsafeLock(path, ue)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("waiting for the session lock at %s: %w", path, ctx.Err())
	case errors.Is(err, fdlock.ErrTimeout):
		return nil, &LockTimeoutError{Path: path, Waited: s.now().Sub(started)}
	}
	return nil, &IOError{Op: "flock", Path: path, Err: err}
}
