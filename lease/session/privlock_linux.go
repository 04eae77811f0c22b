package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	gofrs "github.com/gofrs/flock"
	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/safefile"
)

// lockFlags are the open flags of the session lock files: those of
// open_lock_file (create, read-write, never truncate) plus O_NOFOLLOW and
// O_NONBLOCK (a symlink or FIFO planted at the path is refused, not
// followed or hung on). Go adds O_CLOEXEC.
const lockFlags = os.O_RDWR | os.O_CREATE | unix.O_NOFOLLOW | unix.O_NONBLOCK

// lockPrivate takes how (lockSH or lockEX) on the lock file at path with
// the seed's bounded wait, for a lock this process holds alone and releases
// itself: the coordinator while registering an owner or under the write
// lock, and the write lock. They are taken by path and never handed to a
// child, so they are gofrs/flock locks; a lock a child inherits goes
// through lockFile (internal/fdlock). See docs/LOCKS.md.
func (s *Store) lockPrivate(ctx context.Context, path string, how int) (*gofrs.Flock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return nil, &IOError{Op: "create directory", Path: filepath.Dir(path), Err: err}
	}
	l := gofrs.New(path, gofrs.SetFlag(lockFlags), gofrs.SetPermissions(0o666))
	try := l.TryLockContext
	if how == lockSH {
		try = l.TryRLockContext
	}
	wctx, cancel := context.WithTimeout(ctx, s.lockBudget)
	defer cancel()
	started := s.now()
	ok, err := try(wctx, s.lockPoll)
	if err != nil && wctx.Err() == nil {
		err = safefile.OpenError(path, err)
	}
	var ue *safefile.UnsafeError
	switch {
	case errors.As(err, &ue):
		return nil, unsafeLock(path, ue)
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("waiting for the session lock at %s: %w", path, ctx.Err())
	case err != nil && wctx.Err() != nil:
		return nil, &LockTimeoutError{Path: path, Waited: s.now().Sub(started)}
	case err != nil:
		return nil, &IOError{Op: "flock", Path: path, Err: err}
	case !ok:
		return nil, &IOError{Op: "flock", Path: path, Err: unix.EWOULDBLOCK}
	}
	fi, err := l.Stat()
	if err == nil {
		err = safefile.CheckOpened(fi, path)
	}
	if err != nil {
		l.Close()
		if errors.As(err, &ue) {
			return nil, unsafeLock(path, ue)
		}
		return nil, &IOError{Op: "stat lock file", Path: path, Err: err}
	}
	return l, nil
}
