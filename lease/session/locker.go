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

// LockerConfig configures an owner-lease Locker: the session, the root, and
// the owner identity written into the record (the seed's
// SessionLeaseOwnerContext, embedded; StorageWriterEpoch is required).
type LockerConfig struct {
	SessionID ID
	Root      string
	// LockWait bounds each wait for a session lock (the coordinator, the
	// write lock) in one Acquire; 0 is the seed's LockWaitBudget. A caller
	// that tries once uses TryOnceLockWait: owners hold the coordinator only
	// for a moment on each registration, so a try-once run may wait out such
	// a moment, not maintenance's whole hold.
	LockWait time.Duration
	OwnerContext
}

// TryOnceLockWait is the lock wait of a try-once acquisition (a run verb
// with --wait 0): a few registrations' worth, not the seed's 10 s.
const TryOnceLockWait = 500 * time.Millisecond

// lockerStore checks what both Lockers need (a session id, a root, a lock
// wait that is not negative) and returns the Store, its lock wait set.
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

// Locker takes a session owner lease (lease.Locker). It is unanchored: the
// record is published before the child exists and the child inherits the
// record's shared-flocked descriptor. Use it from one goroutine at a time.
type Locker struct {
	cfg   LockerConfig
	store *Store
	// prep is the owner record file made while waiting (Notify's Wake),
	// used by the next Acquire.
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

// Notify watches the owner directory (created if needed so it can be
// watched): a record removed, or an owner's last descriptor closed (its
// flock gone). Liveness probes open records read-only, so a failed attempt
// does not wake its own waiter. The end of a maintenance guard is not
// watched (every attempt opens the coordinator itself): waiters notice it
// by polling.
//
// While it waits, the Wake also prepares the owner record's file (an
// unnamed file, written and fsynced; prepared.go), so the attempt after a
// release only overwrites, fsyncs and links it.
func (l *Locker) Notify(context.Context) (lease.Wake, error) {
	w, err := notify(l.store, l.cfg.SessionID)
	if err != nil {
		return nil, err
	}
	return fswatch.Preparing(w, l.prepare, l.dropPrepared), nil
}

// dropPrepared closes an unused prepared record file.
func (l *Locker) dropPrepared() {
	l.prep.close()
	l.prep = nil
}

// prepare makes the record file for the next attempt if there is none.
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

// Acquire registers the owner once. A live incompatible
// owner or a coordinator busy for the whole bounded wait is a
// *lease.HeldError; an undecodable, unverifiable or unknown-schema record
// and a missing writer epoch are refused (lease.ErrRefused) untouched.
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

// ownerLease is a held owner registration as a lease.Lease.
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

// Renew checks the record is still ours: present at its path, the file our
// descriptor holds locked, and carrying our token. Anything else is
// lease.ErrLost; an I/O error reading it is transient.
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
		// Someone closed our copy (the child holds the lock now): the
		// token check above is all that is left to compare.
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

// Finish removes the record if it still carries our token, then closes the
// descriptor. The result is not recorded: the protocol has no result.
func (l *ownerLease) Finish(ctx context.Context, _ lease.Result) error {
	return l.g.Release()
}
