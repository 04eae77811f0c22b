package claim

import (
	"testing"
	"time"
)

func TestRenewResetsDeadlineToNowPlusTTLAndPreservesAcquiredAt(t *testing.T) {
	c, root := newTestClaims(t)
	mustAcquire(t, c, "node:x-renew", "target-session:me", AcquireOptions{TTLMs: 120_000})
	before := readClaim(t, root, "node:x-renew")
	time.Sleep(2 * time.Millisecond)
	t0 := nowMs()
	if res, err := c.Renew(t.Context(), "node:x-renew", "target-session:me", 120_000); res != Renewed || err != nil {
		t.Fatalf("want renewed, have %s (%v)", res, err)
	}
	after := readClaim(t, root, "node:x-renew")
	if *after.ExpiresAt <= *before.ExpiresAt {
		t.Errorf("want a later deadline, have %d <= %d", *after.ExpiresAt, *before.ExpiresAt)
	}
	if d := *after.ExpiresAt - (t0 + 120_000); d < -1000 || d > 1000 {
		t.Errorf("want deadline ~now+ttl (%d), have %d", t0+120_000, *after.ExpiresAt)
	}
	if after.AcquiredAt != before.AcquiredAt || after.PID != before.PID {
		t.Errorf("acquired_at/pid must be preserved: want %d/%d, have %d/%d", before.AcquiredAt, before.PID, after.AcquiredAt, after.PID)
	}
}

func TestRenewDeadlineDoesNotGrowAcrossRepeatedRenewals(t *testing.T) {
	c, root := newTestClaims(t)
	mustAcquire(t, c, "node:x-grow", "target-session:me", AcquireOptions{TTLMs: 120_000})
	for range 5 {
		time.Sleep(2 * time.Millisecond)
		if res, err := c.Renew(t.Context(), "node:x-grow", "target-session:me", 120_000); res != Renewed || err != nil {
			t.Fatalf("want renewed, have %s (%v)", res, err)
		}
	}
	if out := *readClaim(t, root, "node:x-grow").ExpiresAt - nowMs(); out >= 121_000 {
		t.Errorf("deadline grew across renewals: %d ms out", out)
	}
}

func TestRenewIsNoopForWrongHolder(t *testing.T) {
	c, root := newTestClaims(t)
	mustAcquire(t, c, "node:x-other", "target-session:owner", AcquireOptions{TTLMs: 120_000})
	before := *readClaim(t, root, "node:x-other").ExpiresAt
	if res, err := c.Renew(t.Context(), "node:x-other", "target-session:intruder", 120_000); res != NotRenewedOther || err != nil {
		t.Errorf("want held_by_other, have %s (%v)", res, err)
	}
	if after := *readClaim(t, root, "node:x-other").ExpiresAt; after != before {
		t.Errorf("deadline changed: %d -> %d", before, after)
	}
}

func TestRenewIsNoopForExpiredPIDLivenessAndMissingClaim(t *testing.T) {
	c, root := newTestClaims(t)
	if res, err := c.Renew(t.Context(), "node:x-absent", "h", 120_000); res != NotRenewedMissing || err != nil {
		t.Errorf("missing: want missing, have %s (%v)", res, err)
	}
	mustAcquire(t, c, "session:pidonly", "h", AcquireOptions{})
	if readClaim(t, root, "session:pidonly").ExpiresAt != nil {
		t.Fatal("PID claim must have no expires_at")
	}
	if res, err := c.Renew(t.Context(), "session:pidonly", "h", 120_000); res != NotRenewedNoTTL || err != nil {
		t.Errorf("pid claim: want no_ttl, have %s (%v)", res, err)
	}
	mustAcquire(t, c, "node:x-expired", "target-session:me", AcquireOptions{TTLMs: 60_000})
	rec := readClaim(t, root, "node:x-expired")
	rec.ExpiresAt = i64Ptr(nowMs() - 1)
	writeRecord(t, lockfile(t, root, "node:x-expired"), rec)
	if res, err := c.Renew(t.Context(), "node:x-expired", "target-session:me", 60_000); res != NotRenewedExpired || err != nil {
		t.Errorf("expired: want expired, have %s (%v)", res, err)
	}
	if have := *readClaim(t, root, "node:x-expired").ExpiresAt; have != *rec.ExpiresAt {
		t.Errorf("expired claim must not be resurrected: %d -> %d", *rec.ExpiresAt, have)
	}
}
