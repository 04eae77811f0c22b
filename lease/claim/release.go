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

// Release removes holder's claim on key (core.release_claim, non-strict): a
// missing, other holder's or corrupted file is silent success, left in place.
func (c *Claims) Release(ctx context.Context, key, holder string) error {
	if key == "" || holder == "" {
		return fmt.Errorf("%w: key and holder must be non-empty", ErrInvalid)
	}
	path, err := c.Path(key)
	if err != nil {
		return err
	}
	// Read and remove under the recovery mutex: a peer may have reclaimed a stale
	// claim, and an unguarded read-then-remove would delete its new one. If the
	// mutex stays held, our dead-pid claim is left reclaimable.
	return c.release(ctx, path, holder, nil)
}

// release removes holder's claim at path; a file still equal to wrote is ours.
func (c *Claims) release(ctx context.Context, path, holder string, wrote []byte) error {
	existing, held, err := c.removeOwn(ctx, path, holder, wrote)
	if err != nil || existing == nil {
		return err
	}
	// Append the released event after freeing the mutex.
	data := commonEventData(existing)
	data = append(data, Field{Key: "duration_held_ms", Value: big.NewInt(held)})
	c.emit(ctx, EventReleased, data)
	return nil
}

// removeOwn removes holder's claim under its mutex, returning it (or nil).
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
	// Err is why a file was Corrupted, or why no path resolved (state Free).
	Err error
}

// Status inspects key (core.claim_status) and never fails: missing is Free,
// untrusted Corrupted, an unresolvable root Free with Err.
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
