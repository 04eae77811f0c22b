package session

import (
	"context"
	"errors"

	gofrs "github.com/gofrs/flock"
)

// WriteGuard is held exclusive access to one session's write critical section
// (the seed's SessionWriteGuard), not ownership.
type WriteGuard struct {
	file        *gofrs.Flock
	coordinator *gofrs.Flock
}

// AcquireWriteLock is acquire_session_write_lock: coordinator shared, then
// <sid>.write.lock exclusive, each with the bounded wait.
func (s *Store) AcquireWriteLock(ctx context.Context, sid ID) (*WriteGuard, error) {
	cpath := s.LockPath(sid)
	coordinator, err := s.lockPrivate(ctx, cpath, lockSH)
	if err != nil {
		return nil, err
	}
	g, err := s.writeLock(ctx, sid)
	if err != nil {
		coordinator.Close()
		return nil, err
	}
	g.coordinator = coordinator
	return g, nil
}

// AcquireWriteLock is acquire_maintenance_session_write_lock.
func (m *MaintenanceGuard) AcquireWriteLock(ctx context.Context) (*WriteGuard, error) {
	if m.coordinator == nil {
		return nil, errGuardReleased
	}
	return m.store.writeLock(ctx, m.sid)
}

func (s *Store) writeLock(ctx context.Context, sid ID) (*WriteGuard, error) {
	path := s.WriteLockPath(sid)
	f, err := s.lockPrivate(ctx, path, lockEX)
	if err != nil {
		return nil, err
	}
	return &WriteGuard{file: f}, nil
}

// Release closes the write lock and the shared coordinator. Idempotent.
func (g *WriteGuard) Release() error {
	var errs []error
	if g.file != nil {
		errs = append(errs, g.file.Close())
		g.file = nil
	}
	if g.coordinator != nil {
		errs = append(errs, g.coordinator.Close())
		g.coordinator = nil
	}
	return errors.Join(errs...)
}
