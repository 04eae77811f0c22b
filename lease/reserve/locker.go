package reserve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leasewrap/leasewrap/internal/fault"
	"github.com/leasewrap/leasewrap/internal/fswatch"
	"github.com/leasewrap/leasewrap/lease"
)

// Kind is the lease kind name of reservations.
const Kind = "reservation"

// maxAcquireRounds bounds Acquire's re-decisions after the record changed.
const maxAcquireRounds = 8

// LockerConfig configures a reservation Locker.
type LockerConfig struct {
	Key, Repo, Branch string
	// Home is the resolved orchestratectl home (see ResolveHome).
	Home string
	// RunID is the run id to reserve; "" means a fresh ULID per attempt.
	RunID string
	// PublishFailures publishes non-zero exits too (a forwarded-signal stop only with
	// PublishSignalled).
	PublishFailures bool
	// PublishSignalled, with PublishFailures, publishes a forwarded-signal stop too.
	PublishSignalled bool
	// Host is written into the manifest.
	Host string
	// Argv is the command recorded in the manifest.
	Argv []string
}

// Locker is the reservation kind's lease.Locker, not safe for concurrent use.
type Locker struct {
	cfg   LockerConfig
	key   Key
	store *Store

	// Test seams.
	now       func() time.Time
	pid       int
	startSecs func(pid int) (uint64, error)
}

var _ lease.Locker = (*Locker)(nil)

// NewLocker checks cfg and returns its Locker.
func NewLocker(cfg LockerConfig) (*Locker, error) {
	if cfg.Home == "" {
		return nil, fmt.Errorf("%w: LockerConfig.Home is empty", ErrNoHome)
	}
	if cfg.RunID != "" {
		if err := ValidateRunID(cfg.RunID); err != nil {
			return nil, fmt.Errorf("reserve: --run-id: %w", err)
		}
	}
	if err := checkSize(cfg, NewStore(cfg.Home).Layout()); err != nil {
		return nil, err
	}
	return &Locker{
		cfg:       cfg,
		key:       Key{Repo: cfg.Repo, Branch: cfg.Branch, Key: cfg.Key},
		store:     NewStore(cfg.Home),
		now:       time.Now,
		pid:       os.Getpid(),
		startSecs: ProcessStartSecs,
	}, nil
}

// Kind is "reservation".
func (l *Locker) Kind() string { return Kind }

// Key is the idempotency key.
func (l *Locker) Key() string { return l.cfg.Key }

// Notify watches the key's record, the runs directory and the materializer
// leases (a creator's flock gone), creating directories as needed.
func (l *Locker) Notify(context.Context) (lease.Wake, error) {
	lay := l.store.Layout()
	ws := []fswatch.Watch{
		{Dir: lay.IdempotencyDir(), Names: []string{filepath.Base(l.store.RecordPath(l.key))}},
		{Dir: lay.RunsDir()},
		{Dir: lay.MaterializerDir()},
	}
	for _, w := range ws {
		os.MkdirAll(w.Dir, 0o777)
	}
	return fswatch.New(ws)
}

// Acquire tries once to reserve the key (decision table in the package doc).
func (l *Locker) Acquire(ctx context.Context) (lease.Lease, error) {
	observed, err := l.store.Lookup(ctx, l.key)
	if err != nil {
		return nil, l.refusal(err)
	}
	for range maxAcquireRounds {
		if observed == nil {
			rl, existing, err := l.reserveFresh(ctx)
			if err != nil || rl != nil {
				return rl, err
			}
			observed = existing // lost the create race: decide on the winner
			continue
		}
		rl, current, err := l.decide(ctx, observed)
		if err != nil || rl != nil {
			return rl, err
		}
		observed = current // the record changed under us: decide again
	}
	return nil, fmt.Errorf("reserve: %s keeps changing under concurrent callers; try again", l.store.RecordPath(l.key))
}

// refusal names the key in a store error.
func (l *Locker) refusal(err error) error {
	return fmt.Errorf("reservation %q: %w", l.cfg.Key, err)
}

// newRecord takes a new run id's materializer lease FIRST, then makes its record.
func (l *Locker) newRecord() (*MaterializerLease, *Record, error) {
	runID := l.cfg.RunID
	if runID == "" {
		var err error
		if runID, err = NewRunID(l.now()); err != nil {
			return nil, nil, err
		}
	}
	ml, err := AcquireMaterializerLease(l.store.Layout(), runID)
	if err != nil {
		return nil, nil, err
	}
	fault.Point("reserve.after-materializer-lease")
	var start *uint64
	if s, err := l.startSecs(l.pid); err == nil {
		start = &s
	}
	creator := NewCreator(uint32(l.pid), start, l.now(), ml.Path())
	return ml, NewRecord(runID, creator), nil
}

func (l *Locker) reserveFresh(ctx context.Context) (lease.Lease, *Record, error) {
	ml, rec, err := l.newRecord()
	if err != nil {
		return nil, nil, err
	}
	existing, err := l.store.Reserve(ctx, l.key, rec)
	if err != nil || existing != nil {
		ml.Close()
		if err != nil {
			return nil, nil, l.refusal(err)
		}
		return nil, existing, nil
	}
	return l.held(ml, rec), nil, nil
}

func (l *Locker) held(ml *MaterializerLease, rec *Record) *reservationLease {
	return &reservationLease{locker: l, ml: ml, runID: rec.RunID}
}

// decide settles an existing record: replay, held, reclaim or refuse.
func (l *Locker) decide(ctx context.Context, rec *Record) (lease.Lease, *Record, error) {
	path := l.store.RecordPath(l.key)
	lay := l.store.Layout()
	if err := ValidateRunID(rec.RunID); err != nil {
		return nil, nil, l.refusal(&RecordError{Path: path, Reason: ErrInvalidRunID,
			Detail: fmt.Sprintf("%v; leasewrap will not turn it into a path. Inspect the record and move it away by hand", err)})
	}
	published, err := IsPublished(lay, rec.RunID)
	if err != nil {
		return nil, nil, err
	}
	if published {
		return nil, nil, l.replay(rec.RunID)
	}
	live := CreatorLiveness(rec)
	if live == LegacyCreator || live == Unverifiable {
		// A creator that just finished removes its lease file: look again before refusing.
		if cur, changed, err := l.recheck(ctx, rec); err != nil || changed {
			return nil, cur, err
		}
	}
	switch live {
	case Live:
		pid, since := 0, time.Time{}
		if rec.Creator != nil {
			pid, since = int(rec.Creator.PID), rec.Creator.StartedAt
		}
		return nil, nil, &lease.HeldError{Kind: Kind, Key: l.cfg.Key, Holder: rec.RunID, PID: pid, Since: since,
			Detail: fmt.Sprintf("run %s in flight (creator live), not yet published", rec.RunID)}
	case LegacyCreator:
		return nil, nil, fmt.Errorf("%w: reservation %q: %s is a legacy record (plain run id %s, no creator identity) and run %s is not published (%s missing): leasewrap cannot tell whether it is still running and will not reclaim it. Check that no orchestratectl or leasewrap process still works on run %s; when sure, run: leasewrap reserve release %s --run-id %s%s",
			lease.ErrRefused, l.cfg.Key, path, rec.RunID, rec.RunID, lay.ManifestPath(rec.RunID), rec.RunID, shellQuote(l.cfg.Key), rec.RunID, l.keyFlags())
	case Unverifiable:
		what := "its materializer lease " + rec.Creator.MaterializerLeasePath + " is missing or cannot be locked"
		if !rec.Creator.HasLeasePath() {
			what = fmt.Sprintf("it names no materializer lease and pid %d does not run with its recorded start time", rec.Creator.PID)
		}
		return nil, nil, fmt.Errorf("%w: reservation %q: the creator of unpublished run %s (record %s) cannot be verified: %s. leasewrap will not reclaim it. Check that no process still works on run %s (pid %d); when sure, run: leasewrap reserve release %s --run-id %s%s",
			lease.ErrRefused, l.cfg.Key, rec.RunID, path, what, rec.RunID, rec.Creator.PID, shellQuote(l.cfg.Key), rec.RunID, l.keyFlags())
	}
	// Dead and unpublished: reclaim by compare-and-replace.
	ml, repl, err := l.newRecord()
	if err != nil {
		return nil, nil, err
	}
	repl.StaleRunIDs = append(append([]string{}, rec.StaleRunIDs...), rec.RunID)
	out, cur, err := l.store.Reclaim(ctx, l.key, rec, repl, lay.ManifestPath(rec.RunID))
	if err != nil {
		ml.Close()
		return nil, nil, l.refusal(err)
	}
	switch out {
	case Published:
		ml.Close()
		return nil, nil, l.replay(rec.RunID)
	case Changed:
		ml.Close()
		return nil, cur, nil
	}
	rl := l.held(ml, repl)
	rl.cleanupStale(ctx, repl.StaleRunIDs)
	return rl, nil, nil
}

// recheck re-reads the record after an unfavourable liveness answer.
func (l *Locker) recheck(ctx context.Context, observed *Record) (*Record, bool, error) {
	cur, err := l.store.Lookup(ctx, l.key)
	if err != nil {
		return nil, false, l.refusal(err)
	}
	if cur == nil || !cur.Equal(observed) {
		return cur, true, nil
	}
	published, err := IsPublished(l.store.Layout(), observed.RunID)
	if err != nil {
		return nil, false, err
	}
	if published {
		return nil, false, l.replay(observed.RunID)
	}
	return nil, false, nil
}

func (l *Locker) replay(runID string) error {
	r, err := ReadReplay(l.store.Layout(), runID)
	if err != nil {
		return fmt.Errorf("reservation %q: %w", l.cfg.Key, err)
	}
	return &lease.ReplayError{Kind: Kind, Key: l.cfg.Key, ExitCode: r.ExitCode, Summary: r.Summary()}
}

func (l *Locker) keyFlags() string {
	s := ""
	if l.cfg.Repo != "" {
		s += " --repo " + shellQuote(l.cfg.Repo)
	}
	if l.cfg.Branch != "" {
		s += " --branch " + shellQuote(l.cfg.Branch)
	}
	return s + " --home " + shellQuote(l.cfg.Home)
}

func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/' || c == ':' || c == '@' || c == '+' || c == '=') {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	out := "'"
	for _, c := range s {
		if c == '\'' {
			out += `'\''`
		} else {
			out += string(c)
		}
	}
	return out + "'"
}
