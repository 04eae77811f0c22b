package claim

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"

	"github.com/leasewrap/leasewrap/internal/pyyaml"
)

// AcquireOptions tune Acquire.
type AcquireOptions struct {
	// PID is the process whose liveness keeps the claim; 0 is the calling
	// process.
	PID int
	// TTLMs is the claim's time to live in ms (60 000..86 400 000); 0 makes
	// a PID-liveness claim with no expires_at.
	TTLMs int64
	// Reason is recorded when non-empty.
	Reason string
	// Metadata is recorded when non-empty (replacing a re-acquired claim's).
	Metadata Metadata
	// DeferEvents returns the audit events in Acquisition.Pending (emit them with EmitPending).
	DeferEvents bool
	// Exclusive treats a claim under this holder name like another holder's: never
	// re-acquired idempotently (the run verbs use it).
	Exclusive bool
	// prep is a file the waiting Locker prepared (nil for none).
	prep *preparedClaim
}

func (o AcquireOptions) reacquires(existing *Record, holder string) bool {
	return existing.Holder == holder && !o.Exclusive
}

// PendingEvent is an audit event Acquire did not append yet.
type PendingEvent struct {
	Type string
	Data Metadata
}

// Acquisition is a successful Acquire.
type Acquisition struct {
	Record *Record
	Path   string
	// Event is EventAcquired, EventIdempotentReacquire or EventStaleReclaimed.
	Event string
	// Pending holds the events not yet appended (AcquireOptions.DeferEvents).
	Pending []PendingEvent
	// wrote is the file written for a new claim; release recognizes it by its bytes.
	wrote []byte
}

// done appends acq's event, or hands it back in Pending.
func (c *Claims) done(ctx context.Context, o AcquireOptions, acq *Acquisition, data Metadata) *Acquisition {
	if o.DeferEvents {
		acq.Pending = append(acq.Pending, PendingEvent{Type: acq.Event, Data: data})
		return acq
	}
	c.emit(ctx, acq.Event, data)
	return acq
}

// EmitPending appends events deferred by Acquire, best-effort.
func (c *Claims) EmitPending(ctx context.Context, evs []PendingEvent) {
	for _, ev := range evs {
		c.emit(ctx, ev.Type, ev.Data)
	}
}

func (c *Claims) validate(key, holder string, o AcquireOptions) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if err := ValidateHolder(holder); err != nil {
		return err
	}
	if o.TTLMs != 0 {
		if err := ValidateTTL(o.TTLMs); err != nil {
			return err
		}
	}
	if _, err := pyyaml.Dump(o.Metadata); err != nil {
		return fmt.Errorf("%w: metadata %v", ErrInvalid, err)
	}
	return nil
}

func (c *Claims) makeClaim(key, holder string, o AcquireOptions) *Record {
	acquired := c.nowMs()
	pid := o.PID
	if pid == 0 {
		pid = c.selfPID()
	}
	rec := &Record{
		SchemaVersion: SchemaVersion,
		Key:           key,
		Holder:        holder,
		AcquiredAt:    acquired,
		PID:           pid,
		Host:          c.hostname(),
		Metadata:      o.Metadata,
	}
	if id := c.machineID(); id != "" {
		rec.MachineID = strPtr(id)
	}
	if o.TTLMs != 0 {
		rec.ExpiresAt = i64Ptr(acquired + o.TTLMs)
	}
	if o.Reason != "" {
		rec.Reason = strPtr(o.Reason)
	}
	if h := ResolveHarness(c.getenv); h != "" {
		rec.Harness = strPtr(h)
	}
	return rec
}

// Acquire takes the claim on key for holder (core.acquire_claim). The same holder
// re-acquires idempotently; a Live or Suspect other holder is a *HeldByOtherError;
// a Stale claim is archived to .expired/ and recreated under the recovery mutex; a
// corrupted file is a *CorruptError and left untouched.
func (c *Claims) Acquire(ctx context.Context, key, holder string, o AcquireOptions) (*Acquisition, error) {
	if err := c.validate(key, holder, o); err != nil {
		return nil, err
	}
	path, err := c.Path(key)
	if err != nil {
		return nil, err
	}
	for attempt := 0; attempt < acquireAttempts; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec := c.makeClaim(key, holder, o)
		payload, err := marshalRecord(rec)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		used, err := o.prep.create(path, payload)
		if !used {
			err = atomicCreateExclusive(path, payload)
		}
		switch {
		case err == nil:
			return c.done(ctx, o, &Acquisition{Record: rec, Path: path, Event: EventAcquired, wrote: payload}, acquiredEventData(rec)), nil
		case !errors.Is(err, errAlreadyHeld):
			return nil, fmt.Errorf("create claim %s: %w", path, err)
		}

		existing, err := readClaimFile(path)
		if errors.Is(err, errGoneAway) {
			continue // released under us
		}
		if err != nil {
			return nil, err // corrupted: refuse, leave it for a person
		}
		if o.reacquires(existing, holder) {
			// Never rewrite under a peer's recovery or renewal: wait, then decide again.
			mutex := recoveryMutex(path)
			if _, err := os.Lstat(mutex); err == nil {
				if !c.stealIfStale(mutex) {
					c.waitForRelease(ctx, mutex, c.mutexWait)
				}
				continue
			}
			return c.idempotentReacquire(ctx, path, key, holder, o, existing)
		}
		if st := c.Classify(existing, c.nowMs()); st == Live || st == Suspect {
			return nil, &HeldByOtherError{Key: key, Holder: existing.Holder, PID: existing.PID, Host: existing.Host, State: st, rec: existing}
		}
		acq, retry, err := c.recoverStale(ctx, path, key, holder, o)
		if retry {
			continue
		}
		return acq, err
	}
	return nil, c.contended(key, path)
}

func (c *Claims) idempotentReacquire(ctx context.Context, path, key, holder string, o AcquireOptions, existing *Record) (*Acquisition, error) {
	rec := c.makeClaim(key, holder, o)
	payload, err := marshalRecord(rec)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := atomicReplace(path, payload); err != nil {
		return nil, err
	}
	data := commonEventData(rec)
	data = append(data, Field{Key: "previous_acquired_at", Value: big.NewInt(existing.AcquiredAt)})
	return c.done(ctx, o, &Acquisition{Record: rec, Path: path, Event: EventIdempotentReacquire}, data), nil
}
