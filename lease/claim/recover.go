package claim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/big"

	"github.com/leasewrap/leasewrap/internal/fault"
)

// recoverStale recovers a stale claim under its recovery mutex; retry means start
// over (a peer held the mutex or won the create).
func (c *Claims) recoverStale(ctx context.Context, path, key, holder string, o AcquireOptions) (*Acquisition, bool, error) {
	mutex := recoveryMutex(path)
	tok, err := c.takeDirMutex(mutex)
	switch {
	case errors.Is(err, fs.ErrExist):
		if !c.stealIfStale(mutex) {
			c.waitForRelease(ctx, mutex, c.mutexWait)
		}
		return nil, true, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, true, nil // the claims dir vanished; create recreates it
	case err != nil:
		return nil, false, fmt.Errorf("take recovery mutex %s: %w", mutex, err)
	}
	fault.Point("claim.recovery-mutex-taken")
	defer c.releaseDirMutex(mutex, tok)
	return c.recoverStaleLocked(ctx, path, key, holder, o)
}

func (c *Claims) recoverStaleLocked(ctx context.Context, path, key, holder string, o AcquireOptions) (*Acquisition, bool, error) {
	rec := c.makeClaim(key, holder, o)
	payload, err := marshalRecord(rec)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	existing, err := readClaimFile(path)
	if errors.Is(err, errGoneAway) {
		switch err := atomicCreateExclusive(path, payload); {
		case err == nil:
			return c.done(ctx, o, &Acquisition{Record: rec, Path: path, Event: EventAcquired}, acquiredEventData(rec)), false, nil
		case errors.Is(err, errAlreadyHeld):
			return nil, true, nil
		default:
			return nil, false, fmt.Errorf("create claim %s: %w", path, err)
		}
	}
	if err != nil {
		return nil, false, err
	}
	if o.reacquires(existing, holder) {
		acq, err := c.idempotentReacquire(ctx, path, key, holder, o, existing)
		return acq, false, err
	}
	if st := c.Classify(existing, c.nowMs()); st == Live || st == Suspect {
		return nil, false, &HeldByOtherError{Key: key, Holder: existing.Holder, PID: existing.PID, Host: existing.Host, State: st}
	}
	if err := archiveClaim(path, c.nowMs()); err != nil {
		return nil, false, fmt.Errorf("failed to archive stale claim %s: %w", path, err)
	}
	switch err := atomicCreateExclusive(path, payload); {
	case err == nil:
		data := commonEventData(rec)
		data = append(data, Field{Key: "previous_holder", Value: existing.Holder}, Field{Key: "previous_pid", Value: big.NewInt(int64(existing.PID))})
		return c.done(ctx, o, &Acquisition{Record: rec, Path: path, Event: EventStaleReclaimed}, data), false, nil
	case errors.Is(err, errAlreadyHeld):
		return nil, true, nil
	default:
		return nil, false, fmt.Errorf("create claim %s: %w", path, err)
	}
}
