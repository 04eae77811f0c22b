package session

import (
	"context"
	"errors"
	"os"
)

// MaintenanceGuard is held exclusive maintenance of one session (the seed's
// SessionMaintenanceGuard): the coordinator held exclusively for its life. Not
// safe for concurrent use.
type MaintenanceGuard struct {
	store       *Store
	sid         ID
	path        string
	coordinator *os.File
}

// AcquireMaintenance is acquire_session_maintenance_guard: the coordinator
// exclusive, stale records pruned, any remaining owner (*OwnedError) or
// undecodable record (*UnverifiableError) refused.
func (s *Store) AcquireMaintenance(ctx context.Context, sid ID) (*MaintenanceGuard, error) {
	lockPath := s.LockPath(sid)
	coordinator, err := s.lockFile(ctx, lockPath, lockEX)
	if err != nil {
		return nil, err
	}
	if err := s.refuseOwner(sid, anyOwner); err != nil {
		coordinator.Close()
		return nil, err
	}
	return &MaintenanceGuard{store: s, sid: sid, path: lockPath, coordinator: coordinator}, nil
}

// anyOwner refuses every remaining owner: maintenance excludes them all.
func anyOwner(*Owner) bool { return true }

// SessionID returns the session under maintenance.
func (m *MaintenanceGuard) SessionID() ID { return m.sid }

// Path returns the coordinator lock's path.
func (m *MaintenanceGuard) Path() string { return m.path }

// File returns the descriptor holding the exclusive coordinator flock (nil after
// Release); a process inheriting it keeps maintenance active.
func (m *MaintenanceGuard) File() *os.File { return m.coordinator }

// Release closes the coordinator, never LOCK_UN. It is idempotent.
func (m *MaintenanceGuard) Release() error {
	if m.coordinator == nil {
		return nil
	}
	err := m.coordinator.Close()
	m.coordinator = nil
	if err != nil {
		return &IOError{Op: "close coordinator", Path: m.path, Err: err}
	}
	return nil
}

var errGuardReleased = errors.New("session: maintenance guard already released")

// TransitionToLease is transition_session_maintenance_to_lease: with the
// coordinator held, prune, refuse any owner, publish oc's record, then release
// the coordinator. The guard is consumed; on failure nothing is registered.
func (m *MaintenanceGuard) TransitionToLease(oc OwnerContext) (*OwnerGuard, error) {
	if m.coordinator == nil {
		return nil, errGuardReleased
	}
	defer m.Release()
	if oc.StorageWriterEpoch == nil {
		return nil, &MissingWriterEpochError{SessionID: m.sid}
	}
	g, err := m.store.register(m.sid, &oc, anyOwner, nil)
	if err != nil {
		return nil, err
	}
	crashPoint(crashHandoff)
	return g, nil
}
