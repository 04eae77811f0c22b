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

// lockPrivate takes a lock never handed to a child (gofrs/flock, bounded wait);
// inherited locks use lockFile. See docs/LOCKS.md.
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
