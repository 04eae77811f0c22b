package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	gofrs "github.com/gofrs/flock"

	"github.com/leasewrap/leasewrap/internal/fdlock"
)

// The seed's API that leasewrap's verbs never call but its ported tests do,
// playing the part of a bcode peer.

// MustParseID is ParseID that panics on error, for constants.
func MustParseID(s string) ID {
	id, err := ParseID(s)
	if err != nil {
		panic(err)
	}
	return id
}

// NewID returns a fresh random (version 4) session id.
func NewID() ID {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("session: new id: %v", err))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return ID{s: h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]}
}

// DefaultOwnerContext is the seed's Default: instance id "process-<pid>".
func DefaultOwnerContext() OwnerContext {
	return OwnerContext{
		StorageWriterEpoch: Some(CurrentWriterEpoch),
		DaemonInstanceID:   Some(fmt.Sprintf("process-%d", os.Getpid())),
	}
}

// ActiveOwners is active_session_owners: Live and Unverifiable records, by token.
func (s *Store) ActiveOwners(sid ID) ([]Owner, error) {
	recs, err := s.Inspect(sid)
	if err != nil {
		return nil, err
	}
	var out []Owner
	for _, r := range recs {
		if r.Err == nil && (r.Liveness == Live || r.Liveness == Unverifiable) {
			out = append(out, *r.Owner)
		}
	}
	return out, nil
}

// MaintenanceIsActive is session_maintenance_is_active: is the coordinator held?
func (s *Store) MaintenanceIsActive(sid ID) (bool, error) {
	lockPath := s.LockPath(sid)
	f, err := openLockFile(lockPath)
	if err != nil {
		return false, err
	}
	defer f.Close()
	ok, err := fdlock.Try(f, lockEX)
	if err != nil {
		return false, &IOError{Op: "flock", Path: lockPath, Err: err}
	}
	return !ok, nil
}

// WriteLockPath is <root>/locks/<sid>.write.lock.
func (s *Store) WriteLockPath(sid ID) string {
	return filepath.Join(s.root, "locks", sid.String()+".write.lock")
}

// WriteGuard is held exclusive access to one session's write critical section
// (the seed's SessionWriteGuard), not ownership.
type WriteGuard struct {
	file        *gofrs.Flock
	coordinator *gofrs.Flock
}

// AcquireWriteLock is acquire_session_write_lock: coordinator shared, then
// <sid>.write.lock exclusive, each with the bounded wait.
func (s *Store) AcquireWriteLock(ctx context.Context, sid ID) (*WriteGuard, error) {
	coordinator, err := s.lockPrivate(ctx, s.LockPath(sid), lockSH)
	if err != nil {
		return nil, err
	}
	f, err := s.lockPrivate(ctx, s.WriteLockPath(sid), lockEX)
	if err != nil {
		coordinator.Close()
		return nil, err
	}
	return &WriteGuard{file: f, coordinator: coordinator}, nil
}

// Release closes the write lock and the shared coordinator.
func (g *WriteGuard) Release() error {
	return errors.Join(g.file.Close(), g.coordinator.Close())
}
