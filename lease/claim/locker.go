package claim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/leasewrap/leasewrap/internal/fswatch"
	"github.com/leasewrap/leasewrap/internal/pyyaml"
	"github.com/leasewrap/leasewrap/lease"
)

// LockerConfig configures a claim lease.Locker.
type LockerConfig struct {
	Key    string
	Holder string
	// Root is the explicit claims root; "" applies the routing rule (see Options.Root).
	Root string
	// TTL is the claim's time to live (1m..24h, whole ms); 0 is a PID-liveness claim.
	TTL    time.Duration
	Reason string
	// Metadata is recorded in the claim, in its order.
	Metadata Metadata
	// EventsDir is where .fno/events.jsonl goes (see Options.EventsDir).
	EventsDir string
	// Getenv reads the environment; nil is os.Getenv.
	Getenv func(string) string
	Logger *slog.Logger
}

// Locker is the claim kind of lease.Locker. Acquire records the pid it is given
// (the child), so liveness follows the process doing the work.
type Locker struct {
	cfg    LockerConfig
	meta   Metadata
	claims *Claims
	// prep is the claim file made while waiting.
	prep *preparedClaim
	// turn is the claims directory, flocked from a Probe that found the
	// claim free until AcquireAnchored returns (turn.go).
	turn *os.File
}

var (
	_ lease.Locker   = (*Locker)(nil)
	_ lease.Anchor   = (*Locker)(nil)
	_ lease.Notifier = (*Locker)(nil)
)

// NewLocker validates cfg and returns a Locker; the claims root must resolve now.
func NewLocker(cfg LockerConfig) (*Locker, error) {
	if err := ValidateKey(cfg.Key); err != nil {
		return nil, err
	}
	if err := ValidateHolder(cfg.Holder); err != nil {
		return nil, err
	}
	if cfg.TTL < 0 {
		return nil, fmt.Errorf("%w: ttl %v is negative", ErrInvalid, cfg.TTL)
	}
	if cfg.TTL != 0 {
		if cfg.TTL%time.Millisecond != 0 {
			return nil, fmt.Errorf("%w: ttl %v is not a whole number of milliseconds", ErrInvalid, cfg.TTL)
		}
		if err := ValidateTTL(cfg.TTL.Milliseconds()); err != nil {
			return nil, fmt.Errorf("%w (ttl must be between 1m and 24h, or 0 for PID liveness)", err)
		}
	}
	var meta Metadata
	if len(cfg.Metadata) > 0 {
		v, err := normalize(cfg.Metadata)
		if err != nil {
			return nil, err
		}
		m := v.(Metadata)
		if _, err := pyyaml.Dump(m); err != nil {
			return nil, fmt.Errorf("%w: metadata %v", ErrInvalid, err)
		}
		meta = m
	}
	c := New(Options{Root: cfg.Root, EventsDir: cfg.EventsDir, Getenv: cfg.Getenv, Logger: cfg.Logger})
	if _, err := c.Path(cfg.Key); err != nil {
		return nil, err
	}
	if err := c.checkSize(cfg.Key, cfg.Holder, AcquireOptions{TTLMs: cfg.TTL.Milliseconds(), Reason: cfg.Reason, Metadata: meta}); err != nil {
		return nil, err
	}
	return &Locker{cfg: cfg, meta: meta, claims: c}, nil
}

// Kind is "claim".
func (l *Locker) Kind() string { return "claim" }

// Key is the claim key.
func (l *Locker) Key() string { return l.cfg.Key }

// Holder is the holder identity.
func (l *Locker) Holder() string { return l.cfg.Holder }

// Probe reads the file only and reports a live or suspect claim, whatever its
// holder, as a *lease.HeldError; a claim that looks free leaves this Locker
// the attempt turn (turn.go) until AcquireAnchored returns.
func (l *Locker) Probe(ctx context.Context) error {
	l.takeTurn(ctx)
	st := l.claims.Status(l.cfg.Key)
	if (st.State != Live && st.State != Suspect) || st.Record == nil {
		return nil
	}
	l.dropTurn()
	r := st.Record
	return &lease.HeldError{Kind: "claim", Key: l.cfg.Key, Holder: r.Holder, PID: r.PID, Host: r.Host,
		Since: time.UnixMilli(r.AcquiredAt), Detail: l.claims.heldDetail(l.cfg.Key, r, st.State)}
}

// Acquire takes the claim for the calling process.
func (l *Locker) Acquire(ctx context.Context) (lease.Lease, error) {
	return l.AcquireAnchored(ctx, os.Getpid())
}

// AcquireAnchored takes the claim for pid (lease.Anchor). A live or suspect claim
// is a *lease.HeldError even under this holder name (two wrappers with one
// --holder must not both run); a corrupted one matches lease.ErrRefused.
func (l *Locker) AcquireAnchored(ctx context.Context, pid int) (lease.Lease, error) {
	defer l.dropTurn()
	if pid <= 0 {
		return nil, fmt.Errorf("claim %q: acquire needs the anchor pid, have %d", l.cfg.Key, pid)
	}
	acq, err := l.claims.Acquire(ctx, l.cfg.Key, l.cfg.Holder, AcquireOptions{
		PID:      pid,
		TTLMs:    l.cfg.TTL.Milliseconds(),
		Reason:   l.cfg.Reason,
		Metadata: l.meta,
		// The stopped child waits on Acquire: append events once it runs.
		DeferEvents: true,
		Exclusive:   true,
		prep:        l.prep,
	})
	if !l.prep.ready() {
		l.prep = nil // used up
	}
	var held *HeldByOtherError
	if errors.As(err, &held) {
		he := &lease.HeldError{Kind: "claim", Key: l.cfg.Key, Holder: held.Holder, PID: held.PID, Host: held.Host,
			Detail: l.claims.heldDetail(l.cfg.Key, held.rec, held.State)}
		if held.rec != nil {
			he.Since = time.UnixMilli(held.rec.AcquiredAt)
		}
		return nil, he
	}
	if err != nil {
		return nil, fmt.Errorf("acquire claim %q: %w", l.cfg.Key, err)
	}
	return &claimLease{l: l, pid: acq.Record.PID, acquiredAt: acq.Record.AcquiredAt, path: acq.Path, pending: acq.Pending, wrote: acq.wrote}, nil
}

// Notify watches the claim file and a local holder's process.
func (l *Locker) Notify(context.Context) (lease.Wake, error) {
	path, err := l.claims.Path(l.cfg.Key)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	var ws []fswatch.Watch
	if err := os.MkdirAll(dir, dirMode); err == nil {
		ws = []fswatch.Watch{{Dir: dir, Names: []string{filepath.Base(path)}}}
	}
	w, err := fswatch.New(ws) // nothing watchable: the supervisor's back-off polls
	if err != nil {
		return nil, err
	}
	// While waiting, create the next attempt's claim file (prepared.go).
	prepare := func() {
		if !l.prep.ready() {
			l.prep = prepareClaim(dir)
		}
	}
	drop := func() {
		l.prep.close()
		l.prep = nil
	}
	return fswatch.Preparing(w, prepare, drop), nil
}

type claimLease struct {
	l          *Locker
	pid        int
	acquiredAt int64 // the record's acquired_at, as written by this run
	path       string
	pending    []PendingEvent // audit events not yet appended
	wrote      []byte         // the claim file as this run wrote it (nil once rewritten or unknown)
}

// Started appends ls's pending audit events now that the child runs.
func (l *Locker) Started(ctx context.Context, ls lease.Lease) {
	if c, ok := ls.(*claimLease); ok {
		c.emitPending(ctx)
	}
}

func (c *claimLease) emitPending(ctx context.Context) {
	c.l.claims.EmitPending(ctx, c.pending)
	c.pending = nil
}

func (c *claimLease) Holder() string        { return c.l.cfg.Holder }
func (c *claimLease) Env() []string         { return nil }
func (c *claimLease) TTL() time.Duration    { return c.l.cfg.TTL }
func (c *claimLease) Done() <-chan struct{} { return nil }

// Renew extends a TTL claim (a PID-liveness claim is checked to be ours). Not ours
// matches lease.ErrLost; I/O and a busy mutex are transient.
func (c *claimLease) Renew(ctx context.Context) error {
	key, holder := c.l.cfg.Key, c.l.cfg.Holder
	if c.l.cfg.TTL == 0 {
		rec, err := readClaimFile(c.path)
		switch {
		case errors.Is(err, errGoneAway):
			return fmt.Errorf("claim %q: %s was removed: %w", key, c.path, lease.ErrLost)
		case errors.Is(err, ErrCorrupt):
			return fmt.Errorf("claim %q: %w: %w", key, err, lease.ErrLost)
		case errors.Is(err, errTransientRead):
			return fmt.Errorf("claim %q: %w (will retry)", key, err)
		case err != nil:
			return fmt.Errorf("check claim %q (will retry): %w", key, err) // I/O: transient
		case rec.Holder != holder || rec.PID != c.pid:
			return fmt.Errorf("claim %q is now %s's (pid %d): %w", key, rec.Holder, rec.PID, lease.ErrLost)
		}
		return nil
	}
	res, err := c.l.claims.Renew(ctx, key, holder, c.l.cfg.TTL.Milliseconds())
	c.wrote = nil // a renewal rewrites the file
	switch {
	case err != nil:
		return fmt.Errorf("renew claim %q: %w", key, err)
	case res == Renewed:
		return nil
	case res == NotRenewedBusy:
		return fmt.Errorf("renew claim %q: recovery mutex busy, will retry", key)
	}
	return fmt.Errorf("renew claim %q: not renewed (%s): %w", key, res, lease.ErrLost)
}

// Finish releases the claim after pending events; past the fencing deadline only
// if holder, pid and acquired_at are unchanged (else the lease was lost).
func (c *claimLease) Finish(ctx context.Context, res lease.Result) error {
	if res.PastFence {
		rec, err := readClaimFile(c.path)
		if err != nil || rec.Holder != c.l.cfg.Holder || rec.PID != c.pid || rec.AcquiredAt != c.acquiredAt {
			return fmt.Errorf("claim %q past its fencing deadline is no longer ours: %w", c.l.cfg.Key, lease.ErrLost)
		}
	}
	c.emitPending(ctx)
	return c.l.claims.release(ctx, c.path, c.l.cfg.Holder, c.wrote)
}
