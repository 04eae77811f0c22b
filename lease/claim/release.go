package claim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"

	"github.com/leasewrap/leasewrap/internal/fault"
)

// Release removes holder's claim on key (core.release_claim, non-strict):
// a missing file, another holder's claim and a corrupted file are all
// silent success; a corrupted file is left in place for a person.
func (c *Claims) Release(ctx context.Context, key, holder string) error {
	if key == "" || holder == "" {
		return fmt.Errorf("%w: key and holder must be non-empty", ErrInvalid)
	}
	path, err := c.Path(key)
	if err != nil {
		return err
	}
	// Remove under the recovery mutex, reading the claim inside it: a
	// peer that found this claim stale (its pid already dead) archives it
	// and creates its own under the same mutex, and an unguarded
	// read-then-remove would delete that new claim (two holders). A mutex
	// held past the wait leaves our claim in place: its pid is dead, so it
	// is reclaimable. The seed reads once before anything else; reading
	// only under the mutex decides the same (gone, corrupted or another
	// holder's: nothing is touched) without a read on the path between
	// the job's end and the next holder's start, and a release of a claim
	// that is not ours costs a mutex instead.
	return c.release(ctx, path, holder, nil)
}

// release removes holder's claim at path. wrote, when not nil, is the
// file this process wrote for the claim: a file that still holds exactly
// those bytes is holder's without being parsed under the mutex (it is
// parsed after, for the event).
func (c *Claims) release(ctx context.Context, path, holder string, wrote []byte) error {
	existing, held, err := c.removeOwn(ctx, path, holder, wrote)
	if err != nil || existing == nil {
		return err
	}
	// The released event is appended once the mutex is free again (the
	// seed holds no mutex for it at all).
	data := commonEventData(existing)
	data = append(data, Field{Key: "duration_held_ms", Value: big.NewInt(held)})
	c.emit(ctx, EventReleased, data)
	return nil
}

// removeOwn removes path under its recovery mutex if it is holder's claim,
// returning the claim removed (nil when nothing was) and how long it was
// held.
func (c *Claims) removeOwn(ctx context.Context, path, holder string, wrote []byte) (*Record, int64, error) {
	mutex := recoveryMutex(path)
	tok, err := c.acquireDirMutex(ctx, mutex, c.mutexWait, true)
	if err != nil {
		if rec, rerr := readClaimFile(path); rerr == nil && rec.Holder == holder {
			c.log.Warn("claims: release skipped, recovery mutex not taken; the claim stays until reclaimed", "path", path, "err", err)
		}
		return nil, 0, nil
	}
	defer c.releaseDirMutex(mutex, tok)
	raw, err := readClaimBytes(path)
	if err != nil {
		return nil, 0, nil // gone away or unreadable (left for a person)
	}
	now := c.nowMs()
	var existing *Record
	if wrote == nil || !bytes.Equal(raw, wrote) {
		if existing, err = parseClaim(path, raw); err != nil || existing.Holder != holder {
			return nil, 0, nil // corrupted (left for a person) or another holder's
		}
	}
	fault.Point("claim.mid-release")
	if err := os.Remove(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, nil
		}
		return nil, 0, fmt.Errorf("release %s: %w", path, err)
	}
	if existing == nil { // ours by its bytes: parsed for the event now, off the path that counts
		if existing, err = parseClaim(path, raw); err != nil {
			return nil, 0, nil
		}
	}
	return existing, max(now-existing.AcquiredAt, 0), nil
}

// Status is one key's state.
type Status struct {
	Key   string
	Path  string
	State State
	// Record is set for Live, Suspect and Stale.
	Record *Record
	// Err says why a Corrupted file was refused (a *CorruptError), or why
	// no path could be resolved (the state is then Free).
	Err error
}

// Status inspects key (core.claim_status). It never fails: a missing file
// (or one that vanishes mid-read) is Free, an untrusted one Corrupted, and
// an unresolvable root reads as Free with Err set.
func (c *Claims) Status(key string) Status {
	path, err := c.Path(key)
	if err != nil {
		return Status{Key: key, State: Free, Err: err}
	}
	return c.statusAt(key, path)
}

func (c *Claims) statusAt(key, path string) Status {
	rec, err := readClaimFile(path)
	switch {
	case errors.Is(err, errGoneAway):
		return Status{Key: key, Path: path, State: Free}
	case err != nil:
		return Status{Key: key, Path: path, State: Corrupted, Err: err}
	}
	return Status{Key: key, Path: path, State: c.Classify(rec, c.nowMs()), Record: rec}
}
