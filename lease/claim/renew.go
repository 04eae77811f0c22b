package claim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/leasewrap/leasewrap/internal/fault"
)

// RenewResult says what Renew did.
type RenewResult string

const (
	// Renewed: expires_at is now now+ttl.
	Renewed RenewResult = "renewed"
	// NotRenewedMissing: no claim file.
	NotRenewedMissing RenewResult = "missing"
	// NotRenewedOther: the claim is another holder's.
	NotRenewedOther RenewResult = "held_by_other"
	// NotRenewedNoTTL: a PID-liveness claim has no TTL to extend.
	NotRenewedNoTTL RenewResult = "no_ttl"
	// NotRenewedExpired: already expired; never resurrected.
	NotRenewedExpired RenewResult = "expired"
	// NotRenewedCorrupted: the file cannot be trusted (left untouched).
	NotRenewedCorrupted RenewResult = "corrupted"
	// NotRenewedBusy: a peer holds the recovery mutex; back off.
	NotRenewedBusy RenewResult = "busy"
)

// Renew sets holder's TTL claim to expires_at = now + ttlMs under the recovery
// mutex, keeping every other field. An error (bad input, I/O) is not a loss.
func (c *Claims) Renew(ctx context.Context, key, holder string, ttlMs int64) (RenewResult, error) {
	if key == "" || holder == "" {
		return "", fmt.Errorf("%w: key and holder must be non-empty", ErrInvalid)
	}
	if ttlMs <= 0 {
		return "", fmt.Errorf("%w: ttl_ms must be positive", ErrInvalid)
	}
	path, err := c.Path(key)
	if err != nil {
		return "", err
	}
	// A cheap pre-check outside the mutex.
	if res, _, err := c.renewable(path, holder); res != "" || err != nil {
		return res, err
	}
	mutex := recoveryMutex(path)
	tok, err := c.takeDirMutex(mutex)
	if errors.Is(err, fs.ErrExist) && c.stealIfStale(mutex) {
		tok, err = c.takeDirMutex(mutex)
	}
	switch {
	case errors.Is(err, fs.ErrExist):
		return NotRenewedBusy, nil
	case err != nil:
		// Our mutex was removed again: transient, not a loss.
		return "", fmt.Errorf("renew %s: %w", path, err)
	}
	defer c.releaseDirMutex(mutex, tok)

	res, rec, err := c.renewable(path, holder)
	if res != "" || err != nil {
		return res, err
	}
	if isExpired(rec, c.nowMs()) {
		return NotRenewedExpired, nil
	}
	fault.Point("claim.mid-renew")
	rec.ExpiresAt = i64Ptr(c.nowMs() + ttlMs)
	payload, err := marshalRecord(rec)
	if err != nil {
		return "", err
	}
	if err := atomicReplace(path, payload); err != nil {
		return "", err
	}
	return Renewed, nil
}

// renewable returns "" and the record for holder's TTL claim.
func (c *Claims) renewable(path, holder string) (RenewResult, *Record, error) {
	rec, err := readClaimFile(path)
	switch {
	case errors.Is(err, errGoneAway):
		return NotRenewedMissing, nil, nil
	case errors.Is(err, errTransientRead):
		return "", nil, fmt.Errorf("renew: %w", err)
	case err != nil:
		return NotRenewedCorrupted, nil, nil
	case rec.Holder != holder:
		return NotRenewedOther, nil, nil
	case rec.ExpiresAt == nil:
		return NotRenewedNoTTL, nil, nil
	}
	return "", rec, nil
}
