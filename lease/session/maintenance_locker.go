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
	// Holder names who maintains, for LEASEWRAP_HOLDER and logs only; the
	// protocol records nothing for maintenance.
	Holder string
	// LockWait bounds each wait for the coordinator in one Acquire; 0 is
	// the seed's LockWaitBudget (see LockerConfig.LockWait).
	LockWait time.Duration
}

// MaintenanceLocker takes the maintenance guard (lease.Locker, kind
// "session-maintenance"): the coordinator held exclusively, refused while
// any owner remains. The child inherits the coordinator descriptor, so the
// guard outlives a SIGKILL of leasewrap for as long as the child runs.
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

// Acquire takes the maintenance guard once. A remaining live owner or a busy
// coordinator is a *lease.HeldError; an undecodable or unverifiable record
// is refused (lease.ErrRefused), untouched.
func (l *MaintenanceLocker) Acquire(ctx context.Context) (lease.Lease, error) {
	g, err := l.store.AcquireMaintenance(ctx, l.cfg.SessionID)
	if err != nil {
		return nil, adaptError(KindMaintenance, l.cfg.SessionID, err)
	}
	return &MaintenanceLease{g: g, holder: l.cfg.Holder}, nil
}

// MaintenanceLease is a held maintenance guard as a lease.Lease, plus the
// gap-free transition to an owner lease.
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

// Renew checks that the coordinator lock file at its path is still the one
// our descriptor locks (someone deleting it would let a newcomer lock a new
// file): lease.ErrLost otherwise.
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

// Transition replaces the maintenance guard with an owner lease for owner
// without a gap (see MaintenanceGuard.TransitionToLease). owner's SessionID
// and Root may be left zero; if set they must match the guard's. Whatever
// the outcome the maintenance guard is released; on failure nothing is
// registered. ctx bounds nothing today (the coordinator is already held) and
// is there for symmetry with Acquire.
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
