package reserve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/leasewrap/leasewrap/internal/fault"
)

// Key is orchestratectl's (source_repo, source_branch, key); empty means missing.
type Key struct {
	Repo, Branch, Key string
}

// Hash is KeyHash of k.
func (k Key) Hash() string { return KeyHash(k.Repo, k.Branch, k.Key) }

// Store reads and writes one home's records under per-key flocks; concurrency-safe.
type Store struct {
	layout      Layout
	lockTimeout time.Duration // test seam; 0 = defaultLockTimeout
}

// NewStore returns the Store of home (an absolute path; see ResolveHome).
func NewStore(home string) *Store { return &Store{layout: Layout{Home: home}} }

// Layout returns the paths of the Store's home.
func (s *Store) Layout() Layout { return s.layout }

// RecordPath is the record file of k.
func (s *Store) RecordPath(k Key) string { return s.layout.RecordPath(k.Repo, k.Branch, k.Key) }

// LockPath is the per-key lock file of k.
func (s *Store) LockPath(k Key) string { return s.layout.LockPath(k.Repo, k.Branch, k.Key) }

func (s *Store) locked(ctx context.Context, k Key, fn func() error) error {
	return withKeyLock(ctx, s.LockPath(k), s.lockTimeout, fn)
}

// readRecord reads the record at path: nil, nil when absent.
func readRecord(path string) (*Record, error) {
	raw, err := readRecordNoFollow(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		var re *RecordError
		if errors.As(err, &re) {
			return nil, err
		}
		return nil, fmt.Errorf("reserve: read %s: %w", path, err)
	}
	rec, err := ParseRecord(raw)
	if err != nil {
		reason := ErrCorrupt
		detail := fmt.Sprintf("%v; leasewrap will not read or overwrite it. Inspect the file; if no run uses the key any more, move it away by hand", err)
		if errors.Is(err, ErrUnsupportedSchema) {
			reason = ErrUnsupportedSchema
			detail = fmt.Sprintf("%v; it was written by a newer orchestratectl. Use that version, or move the file away by hand", err)
		}
		return nil, &RecordError{Path: path, Reason: reason, Detail: detail}
	}
	return rec, nil
}

// Lookup returns the record of k, or nil when the key is free.
func (s *Store) Lookup(ctx context.Context, k Key) (*Record, error) {
	var rec *Record
	err := s.locked(ctx, k, func() (err error) {
		rec, err = readRecord(s.RecordPath(k))
		return err
	})
	return rec, err
}

// Reserve reserves k for rec: (nil, nil) when this caller won, else the existing record.
func (s *Store) Reserve(ctx context.Context, k Key, rec *Record) (existing *Record, err error) {
	p := s.RecordPath(k)
	err = s.locked(ctx, k, func() error {
		if existing, err = readRecord(p); err != nil || existing != nil {
			return err
		}
		won, err := writeRecordExclusive(p, rec)
		fault.Point("reserve.after-reserve")
		if err != nil || won {
			return err
		}
		if existing, err = readRecord(p); err != nil {
			return err
		}
		if existing == nil {
			return fmt.Errorf("reserve: reservation %s vanished after claim contention", p)
		}
		return nil
	})
	return existing, err
}

// ReclaimOutcome is the result of Reclaim.
type ReclaimOutcome int

const (
	// Reclaimed: the observed record was replaced; the caller owns the key.
	Reclaimed ReclaimOutcome = iota + 1
	// Published: the manifest exists; the run must be replayed, not redone.
	Published
	// Changed: someone else changed the record first; see the returned record.
	Changed
)

func (o ReclaimOutcome) String() string {
	switch o {
	case Reclaimed:
		return "reclaimed"
	case Published:
		return "published"
	case Changed:
		return "changed"
	}
	return fmt.Sprintf("ReclaimOutcome(%d)", int(o))
}

// Reclaim compare-and-replaces observed (whose creator the caller proved dead)
// under the key lock: published wins; a record no longer Equal to observed is
// returned with Changed, untouched.
func (s *Store) Reclaim(ctx context.Context, k Key, observed, replacement *Record, publishedManifest string) (ReclaimOutcome, *Record, error) {
	p := s.RecordPath(k)
	var out ReclaimOutcome
	var cur *Record
	err := s.locked(ctx, k, func() error {
		if _, err := os.Stat(publishedManifest); err == nil {
			out = Published
			return nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("reserve: check %s: %w", publishedManifest, err)
		}
		current, err := readRecord(p)
		if err != nil {
			return err
		}
		switch {
		case current != nil && current.Equal(observed):
			if err := writeRecordAtomic(p, replacement); err != nil {
				return fmt.Errorf("reserve: %w", err)
			}
			fault.Point("reserve.after-reclaim")
			out = Reclaimed
		case current != nil:
			out, cur = Changed, current
		default:
			won, err := writeRecordExclusive(p, replacement)
			if err != nil {
				return fmt.Errorf("reserve: %w", err)
			}
			if won {
				out = Reclaimed
				return nil
			}
			if cur, err = readRecord(p); err != nil {
				return err
			}
			if cur == nil {
				return fmt.Errorf("reserve: reservation %s vanished after reclaim contention", p)
			}
			out = Changed
		}
		return nil
	})
	return out, cur, err
}

// ReleaseOutcome is the result of Release.
type ReleaseOutcome int

const (
	// Released: the record named the run and was removed.
	Released ReleaseOutcome = iota + 1
	// NotOwner: the record names another run; nothing was touched.
	NotOwner
	// Absent: there was no record; nothing was touched.
	Absent
)

func (o ReleaseOutcome) String() string {
	switch o {
	case Released:
		return "released"
	case NotOwner:
		return "not_owner"
	case Absent:
		return "absent"
	}
	return fmt.Sprintf("ReleaseOutcome(%d)", int(o))
}

// Release removes k's record only if it names runID (legacy included), so a late
// release never clobbers a newer owner. current is the record found.
func (s *Store) Release(ctx context.Context, k Key, runID string) (out ReleaseOutcome, current *Record, err error) {
	p := s.RecordPath(k)
	err = s.locked(ctx, k, func() error {
		if current, err = readRecord(p); err != nil {
			return err
		}
		switch {
		case current == nil:
			out = Absent
		case current.RunID != runID:
			out = NotOwner
		default:
			fault.Point("reserve.mid-release")
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("reserve: remove %s: %w", p, err)
			}
			fsyncDir(filepath.Dir(p))
			out = Released
		}
		return nil
	})
	return out, current, err
}

// FinishStaleCleanup clears stale_run_ids of runID's record once their staging
// is removed; ErrOwnerChanged if it names another run, an absent record is fine.
func (s *Store) FinishStaleCleanup(ctx context.Context, k Key, runID string) error {
	p := s.RecordPath(k)
	return s.locked(ctx, k, func() error {
		rec, err := readRecord(p)
		if err != nil || rec == nil {
			return err
		}
		if rec.RunID != runID {
			return fmt.Errorf("%w: reservation %s changed before stale cleanup completed for %s (now %s)", ErrOwnerChanged, p, runID, rec.RunID)
		}
		if len(rec.StaleRunIDs) == 0 {
			return nil
		}
		rec.StaleRunIDs = []string{}
		if err := writeRecordAtomic(p, rec); err != nil {
			return fmt.Errorf("reserve: %w", err)
		}
		return nil
	})
}
