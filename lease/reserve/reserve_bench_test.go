package reserve_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/lease/leasetest"
	"github.com/leasewrap/leasewrap/lease/reserve"
)

func benchLocker(b *testing.B, home, key string) *reserve.Locker {
	b.Helper()
	l, err := reserve.NewLocker(reserve.LockerConfig{Key: key, Home: home, Host: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkLockerAcquireFinish reserves a key and releases it again (a
// failed run, which is not published), the in-process part of
// `leasewrap reserve run` for a new key.
func BenchmarkLockerAcquireFinish(b *testing.B) {
	l := benchLocker(b, b.TempDir(), "bench-key")
	leasetest.BenchAcquireFinish(b, l.Acquire, lease.Result{ExitCode: 1})
}

// BenchmarkLockerAcquirePublish reserves a fresh key per iteration and
// publishes its manifest (a successful run).
func BenchmarkLockerAcquirePublish(b *testing.B) {
	home := b.TempDir()
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		l := benchLocker(b, home, "bench-key-"+strconv.Itoa(i))
		ls, err := l.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := ls.Finish(ctx, lease.Result{ExitCode: 0, Argv: []string{"true"}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLockerAcquireReplay is an attempt on a published key: the
// already-done path.
func BenchmarkLockerAcquireReplay(b *testing.B) {
	home := b.TempDir()
	ctx := context.Background()
	l := benchLocker(b, home, "bench-done")
	ls, err := l.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if err := ls.Finish(ctx, lease.Result{ExitCode: 0, Argv: []string{"true"}}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var replay *lease.ReplayError
		if _, err := l.Acquire(ctx); !errors.As(err, &replay) {
			b.Fatalf("want *lease.ReplayError, have %v", err)
		}
	}
}

// BenchmarkLockerAcquireHeld is one failed attempt on a key in flight:
// what a waiting wrapper pays per retry.
func BenchmarkLockerAcquireHeld(b *testing.B) {
	home := b.TempDir()
	ctx := context.Background()
	ls, err := benchLocker(b, home, "bench-held").Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer ls.Finish(ctx, lease.Result{ExitCode: 1})
	leasetest.BenchAcquireHeld(b, benchLocker(b, home, "bench-held").Acquire)
}
