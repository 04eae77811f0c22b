// Package leasetest holds test helpers shared by the lease kinds' tests
// (benchmarks of one acquire and settle, a waiter's Wake). It is imported only by _test.go
// files; internal/testutil, the ground floor's helpers, knows nothing of
// leases.
package leasetest

import (
	"context"
	"errors"
	"testing"

	"github.com/leasewrap/leasewrap/lease"
)

// BenchAcquireFinish benchmarks one acquire and one Finish with res per
// iteration: the in-process part of a run verb for a free lease.
func BenchAcquireFinish(b *testing.B, acquire func(context.Context) (lease.Lease, error), res lease.Result) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ls, err := acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := ls.Finish(ctx, res); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchAcquireHeld benchmarks one acquire that must fail with
// lease.ErrHeld: what a waiting wrapper pays per retry.
func BenchAcquireHeld(b *testing.B, acquire func(context.Context) (lease.Lease, error)) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := acquire(ctx); !errors.Is(err, lease.ErrHeld) {
			b.Fatalf("want ErrHeld, have %v", err)
		}
	}
}
