package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/leasewrap/leasewrap/internal/fswatch"
	"github.com/leasewrap/leasewrap/internal/safefile"
	"github.com/leasewrap/leasewrap/lease"
)

// Kind names of the two lease.Locker adapters.
const (
	KindOwner       = "session"
	KindMaintenance = "session-maintenance"
)

// Environment variables the child of an owner or maintenance lease gets.
const (
	EnvSessionID  = "LEASEWRAP_SESSION_ID"
	EnvLeaseToken = "LEASEWRAP_LEASE_TOKEN"
)

// LockerConfig configures an owner-lease Locker: session, root and the owner
// identity (the seed's SessionLeaseOwnerContext; StorageWriterEpoch required).
type LockerConfig struct {
	SessionID ID
	Root      string
	// LockWait bounds each session lock wait in one Acquire; 0 is the seed's 10 s.
	LockWait time.Duration
	OwnerContext
}

// TryOnceLockWait is the lock wait of --wait 0: it outlasts an owner's brief
// coordinator hold, not maintenance.
const TryOnceLockWait = 500 * time.Millisecond

func lockerStore(sid ID, root string, lockWait time.Duration) (*Store, error) {
	if sid.IsZero() {
		return nil, fmt.Errorf("session: no session id given: %w", ErrInvalidID)
	}
	if root == "" {
		return nil, errors.New("session: no root directory given (--root or LEASEWRAP_SESSION_ROOT)")
	}
	if lockWait < 0 {
		return nil, fmt.Errorf("session %s: lock wait %v is negative", sid, lockWait)
	}
	st := NewStore(root)
	if lockWait > 0 {
		st.lockBudget = lockWait
	}
	return st, nil
}

// Locker takes a session owner lease. It is unanchored: the child inherits the
// record's shared-flocked descriptor.
type Locker struct {
	cfg   LockerConfig
	store *Store
	// prep is the owner record file made while waiting.
	prep *preparedRecord
}

var (
	_ lease.Locker   = (*Locker)(nil)
	_ lease.Identity = (*Locker)(nil)
)

// NewLocker checks cfg (session id set, root set, writer epoch present).
func NewLocker(cfg LockerConfig) (*Locker, error) {
	st, err := lockerStore(cfg.SessionID, cfg.Root, cfg.LockWait)
	if err != nil {
		return nil, err
	}
	if cfg.StorageWriterEpoch == nil {
		return nil, fmt.Errorf("session %s: %w: give the bcode storage writer epoch (current: %d)", cfg.SessionID, ErrMissingWriterEpoch, CurrentWriterEpoch)
	}
	if err := checkOwnerSize(cfg.SessionID, &cfg.OwnerContext); err != nil {
		return nil, err
	}
	return &Locker{cfg: cfg, store: st}, nil
}

// Kind is "session".
func (l *Locker) Kind() string { return KindOwner }

// Key is the session id.
func (l *Locker) Key() string { return l.cfg.SessionID.String() }

// Holder is the daemon instance id the lease is taken as ("" if none).
func (l *Locker) Holder() string { return holderOf(l.cfg.OwnerContext) }

func holderOf(oc OwnerContext) string {
	if oc.DaemonInstanceID == nil {
		return ""
	}
	return *oc.DaemonInstanceID
}

// Notify watches the owner directory (the end of maintenance is polled) and
// prepares the next attempt's unnamed record file.
func (l *Locker) Notify(context.Context) (lease.Wake, error) {
	w, err := notify(l.store, l.cfg.SessionID)
	if err != nil {
		return nil, err
	}
	return fswatch.Preparing(w, l.prepare, l.dropPrepared), nil
}

func (l *Locker) dropPrepared() {
	l.prep.close()
	l.prep = nil
}

func (l *Locker) prepare() {
	if l.prep != nil && l.prep.f != nil {
		return
	}
	st := l.store
	provisional := newOwner(l.cfg.SessionID, &l.cfg.OwnerContext, st.pid(), st.now(), st.executable)
	l.prep = prepareRecord(st.OwnerDir(l.cfg.SessionID), &provisional)
}

func notify(s *Store, sid ID) (lease.Wake, error) {
	dir := s.OwnerDir(sid)
	_ = os.MkdirAll(dir, 0o777) // a directory that cannot be made is polled instead
	return fswatch.New([]fswatch.Watch{{Dir: dir}})
}

// Acquire registers the owner once. A live incompatible owner or a coordinator
// busy past the wait is a *lease.HeldError; undecodable, unverifiable or
// unknown-schema records and a missing writer epoch are lease.ErrRefused.
func (l *Locker) Acquire(ctx context.Context) (lease.Lease, error) {
	g, err := l.store.acquire(ctx, l.cfg.SessionID, l.cfg.OwnerContext, l.prep)
	if l.prep != nil && l.prep.f == nil {
		l.prep = nil // used up
	}
	if err != nil {
		return nil, adaptError(KindOwner, l.cfg.SessionID, err)
	}
	return &ownerLease{g: g, sid: l.cfg.SessionID, holder: l.Holder()}, nil
}

// adaptError maps the protocol's errors onto the lease contract.
func adaptError(kind string, sid ID, err error) error {
	var owned *OwnedError
	var timeout *LockTimeoutError
	var unverifiable *UnverifiableError
	switch {
	case errors.As(err, &owned):
		if owned.Liveness == Unverifiable {
			return fmt.Errorf("%w: session %s: owner record %s (%s) cannot be classified (schema_version %d; its liveness is unverifiable); it was left untouched: check whether its owner still runs and remove the record by hand if not",
				lease.ErrRefused, sid, owned.Path, owned.Summary, owned.Owner.SchemaVersion)
		}
		holder := owned.Owner.LeaseToken
		if owned.Owner.DaemonInstanceID != nil {
			holder = *owned.Owner.DaemonInstanceID
		}
		return &lease.HeldError{
			Kind:   kind,
			Key:    sid.String(),
			Holder: holder,
			PID:    int(owned.Owner.PID),
			Detail: owned.Summary,
		}
	case errors.As(err, &timeout):
		return &lease.HeldError{
			Kind:   kind,
			Key:    sid.String(),
			Detail: fmt.Sprintf("coordinator %s busy for %s (another registration or maintenance holds it)", timeout.Path, timeout.Waited.Round(time.Millisecond)),
		}
	case errors.As(err, &unverifiable):
		return fmt.Errorf("%w: %v", lease.ErrRefused, err)
	case errors.Is(err, safefile.ErrUnsafe):
		return fmt.Errorf("%w: %v", lease.ErrRefused, err)
	case errors.Is(err, ErrMissingWriterEpoch):
		return fmt.Errorf("%w: %v: give the storage writer epoch", lease.ErrRefused, err)
	}
	return fmt.Errorf("%s %s: %w", kind, sid, err)
}

type ownerLease struct {
	g      *OwnerGuard
	sid    ID
	holder string
}

var _ lease.Lease = (*ownerLease)(nil)

// Owner exposes the published record (for logs and tests).
func (l *ownerLease) Owner() Owner { return l.g.Owner() }

// Path is the published record's path.
func (l *ownerLease) Path() string { return l.g.Path() }

func (l *ownerLease) File() *os.File { return l.g.File() }

func (l *ownerLease) Env() []string {
	return []string{
		EnvSessionID + "=" + l.sid.String(),
		EnvLeaseToken + "=" + l.g.owner.LeaseToken,
	}
}

func (l *ownerLease) TTL() time.Duration { return 0 }

// Holder is the daemon instance id registered ("" if none).
func (l *ownerLease) Holder() string { return l.holder }

// Done is nil: loss is found by Renew.
func (l *ownerLease) Done() <-chan struct{} { return nil }

// Renew checks the record is still ours (present, the file we lock, our token):
// lease.ErrLost otherwise; a read I/O error is transient.
func (l *ownerLease) Renew(ctx context.Context) error {
	path := l.g.path
	f := l.g.File()
	if f == nil {
		return fmt.Errorf("%w: owner record %s already released", lease.ErrLost, path)
	}
	data, err := readRecord(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: owner record %s was removed", lease.ErrLost, path)
		}
		return &IOError{Op: "read owner record", Path: path, Err: err}
	}
	o, err := DecodeOwner(data)
	if err != nil {
		return fmt.Errorf("%w: owner record %s no longer decodes: %v", lease.ErrLost, path, err)
	}
	if o.LeaseToken != l.g.owner.LeaseToken {
		return fmt.Errorf("%w: owner record %s carries token %s, ours is %s", lease.ErrLost, path, o.LeaseToken, l.g.owner.LeaseToken)
	}
	same, err := sameFile(f, path)
	if errors.Is(err, os.ErrClosed) {
		// Our copy was closed (the child holds the lock): the token check suffices.
		return nil
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: owner record %s was removed", lease.ErrLost, path)
		}
		return &IOError{Op: "stat owner record", Path: path, Err: err}
	}
	if !same {
		return fmt.Errorf("%w: owner record %s was replaced by another file (our lock is on the old one)", lease.ErrLost, path)
	}
	return nil
}

// Finish removes the record if it carries our token, then closes the descriptor.
func (l *ownerLease) Finish(ctx context.Context, _ lease.Result) error {
	return l.g.Release()
}
