package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/leasewrap/leasewrap/lease"
)

// MaintenanceConfig configures a maintenance Locker.
type MaintenanceConfig struct {
	SessionID ID
	Root      string
	// Holder names the maintainer for LEASEWRAP_HOLDER and logs; nothing is recorded.
	Holder string
	// LockWait is as LockerConfig.LockWait, for the coordinator.
	LockWait time.Duration
}

// MaintenanceLocker takes the maintenance guard (kind "session-maintenance"),
// refused while any owner remains. The child inherits the coordinator
// descriptor, so the guard outlives a SIGKILL of leasewrap.
type MaintenanceLocker struct {
	cfg   MaintenanceConfig
	store *Store
}

var (
	_ lease.Locker   = (*MaintenanceLocker)(nil)
	_ lease.Identity = (*MaintenanceLocker)(nil)
)

// NewMaintenanceLocker checks cfg (session id and root set).
func NewMaintenanceLocker(cfg MaintenanceConfig) (*MaintenanceLocker, error) {
	st, err := lockerStore(cfg.SessionID, cfg.Root, cfg.LockWait)
	if err != nil {
		return nil, err
	}
	return &MaintenanceLocker{cfg: cfg, store: st}, nil
}

// Kind is "session-maintenance".
func (l *MaintenanceLocker) Kind() string { return KindMaintenance }

// Key is the session id.
func (l *MaintenanceLocker) Key() string { return l.cfg.SessionID.String() }

// Holder is the configured holder name.
func (l *MaintenanceLocker) Holder() string { return l.cfg.Holder }

// Notify watches the owner directory: maintenance waits for owners to go.
func (l *MaintenanceLocker) Notify(context.Context) (lease.Wake, error) {
	return notify(l.store, l.cfg.SessionID)
}

// Acquire takes the guard once. A live owner or busy coordinator is a
// *lease.HeldError; undecodable or unverifiable records are lease.ErrRefused.
func (l *MaintenanceLocker) Acquire(ctx context.Context) (lease.Lease, error) {
	g, err := l.store.AcquireMaintenance(ctx, l.cfg.SessionID)
	if err != nil {
		return nil, adaptError(KindMaintenance, l.cfg.SessionID, err)
	}
	return &MaintenanceLease{g: g, holder: l.cfg.Holder}, nil
}

// MaintenanceLease is a held maintenance guard as a lease.Lease.
type MaintenanceLease struct {
	g      *MaintenanceGuard
	holder string
}

var _ lease.Lease = (*MaintenanceLease)(nil)

// File is the coordinator descriptor (exclusive flock).
func (l *MaintenanceLease) File() *os.File { return l.g.File() }

// Env is LEASEWRAP_SESSION_ID.
func (l *MaintenanceLease) Env() []string {
	return []string{EnvSessionID + "=" + l.g.sid.String()}
}

// TTL is 0: the guard lives as long as the lock.
func (l *MaintenanceLease) TTL() time.Duration { return 0 }

// Holder is the configured maintainer name.
func (l *MaintenanceLease) Holder() string { return l.holder }

// Done is nil: loss is found by Renew.
func (l *MaintenanceLease) Done() <-chan struct{} { return nil }

// Renew checks the coordinator file at its path is still the one we lock (a
// deleted one would let a newcomer lock a new file); lease.ErrLost otherwise.
func (l *MaintenanceLease) Renew(ctx context.Context) error {
	f := l.g.File()
	if f == nil {
		return fmt.Errorf("%w: maintenance guard on %s already released", lease.ErrLost, l.g.path)
	}
	same, err := sameFile(f, l.g.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: coordinator %s was removed", lease.ErrLost, l.g.path)
		}
		return &IOError{Op: "stat coordinator", Path: l.g.path, Err: err}
	}
	if !same {
		return fmt.Errorf("%w: coordinator %s was replaced by another file", lease.ErrLost, l.g.path)
	}
	return nil
}

// Finish closes the coordinator.
func (l *MaintenanceLease) Finish(ctx context.Context, _ lease.Result) error {
	return l.g.Release()
}

// Transition replaces the guard with an owner lease without a gap (see
// MaintenanceGuard.TransitionToLease). owner's SessionID and Root may be zero, or
// must match. The guard is released whatever happens; ctx is unused.
func (l *MaintenanceLease) Transition(ctx context.Context, owner LockerConfig) (lease.Lease, error) {
	sid := l.g.sid
	if owner.SessionID.IsZero() {
		owner.SessionID = sid
	}
	if owner.Root == "" {
		owner.Root = l.g.store.Root()
	}
	if owner.SessionID != sid || owner.Root != l.g.store.Root() {
		l.g.Release()
		return nil, fmt.Errorf("session: transition of %s under %s asked for %s under %s; maintenance released", sid, l.g.store.Root(), owner.SessionID, owner.Root)
	}
	g, err := l.g.TransitionToLease(owner.OwnerContext)
	if err != nil {
		return nil, adaptError(KindOwner, sid, err)
	}
	return &ownerLease{g: g, sid: sid, holder: holderOf(owner.OwnerContext)}, nil
}
