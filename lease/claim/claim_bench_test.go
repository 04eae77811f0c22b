package claim_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/lease/claim"
	"github.com/leasewrap/leasewrap/lease/leasetest"
)

// benchLocker is a claim Locker on a fresh root whose audit events go to
// the same temporary directory.
func benchLocker(b *testing.B, root, holder string, ttl time.Duration) *claim.Locker {
	b.Helper()
	events := filepath.Join(root, "events.jsonl")
	l, err := claim.NewLocker(claim.LockerConfig{
		Key: "bench:key", Holder: holder, Root: root, TTL: ttl,
		Getenv: func(k string) string {
			if k == "FNO_EVENTS_PATH" {
				return events
			}
			return os.Getenv(k)
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkLockerAcquireFinish is one claim taken and released, the
// in-process part of `leasewrap claim run` (two audit events included).
func BenchmarkLockerAcquireFinish(b *testing.B) {
	for _, ttl := range []time.Duration{0, time.Minute} {
		b.Run("ttl="+ttl.String(), func(b *testing.B) {
			l := benchLocker(b, b.TempDir(), "bench-holder", ttl)
			leasetest.BenchAcquireFinish(b, anchoredHere(l), lease.Result{})
		})
	}
}

// BenchmarkLockerAcquireHeld is one failed attempt on a live claim: what
// a waiting wrapper pays per retry.
func BenchmarkLockerAcquireHeld(b *testing.B) {
	root := b.TempDir()
	ctx := context.Background()
	ls, err := anchoredHere(benchLocker(b, root, "holder", 0))(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer ls.Finish(ctx, lease.Result{})
	leasetest.BenchAcquireHeld(b, anchoredHere(benchLocker(b, root, "waiter", 0)))
}

// anchoredHere acquires l's claim anchored to this process.
func anchoredHere(l *claim.Locker) func(context.Context) (lease.Lease, error) {
	return func(ctx context.Context) (lease.Lease, error) { return l.AcquireAnchored(ctx, os.Getpid()) }
}

// BenchmarkLockerRenew is one renewal of a TTL claim.
func BenchmarkLockerRenew(b *testing.B) {
	l := benchLocker(b, b.TempDir(), "bench-holder", time.Minute)
	ctx := context.Background()
	ls, err := l.AcquireAnchored(ctx, os.Getpid())
	if err != nil {
		b.Fatal(err)
	}
	defer ls.Finish(ctx, lease.Result{})
	b.ReportAllocs()
	for b.Loop() {
		if err := ls.Renew(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
