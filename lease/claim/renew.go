package claim

import (
	"context"
	"errors"
	"fmt"
	"os"

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
	// NotRenewedBusy: a peer holds the recovery mutex (mid-reclaim or
	// renewing); a best-effort renewal backs off.
	NotRenewedBusy RenewResult = "busy"
)

// Renew resets holder's TTL claim on key to expires_at = now + ttlMs (a
// fixed window, never a growing span), under the recovery mutex, re-read
// inside it. acquired_at, pid and every other field are preserved. An
// error is returned only for invalid input or a failed write.
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
	// Cheap pre-check outside the mutex.
	if res, _ := c.renewable(path, holder); res != "" {
		return res, nil
	}
	mutex := recoveryMutex(path)
	if os.Mkdir(mutex, 0o755) != nil && !(c.stealIfStale(mutex) && os.Mkdir(mutex, 0o755) == nil) {
		return NotRenewedBusy, nil
	}
	tok := c.stampOwner(mutex)
	defer c.releaseDirMutex(mutex, tok)

	res, rec := c.renewable(path, holder)
	if res != "" {
		return res, nil
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

// renewable returns "" and the record when path holds holder's TTL claim.
func (c *Claims) renewable(path, holder string) (RenewResult, *Record) {
	rec, err := readClaimFile(path)
	switch {
	case errors.Is(err, errGoneAway):
		return NotRenewedMissing, nil
	case err != nil:
		return NotRenewedCorrupted, nil
	case rec.Holder != holder:
		return NotRenewedOther, nil
	case rec.ExpiresAt == nil:
		return NotRenewedNoTTL, nil
	}
	return "", rec
}
