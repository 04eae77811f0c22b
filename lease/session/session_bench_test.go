package session_test

import (
	"context"
	"testing"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/lease/leasetest"
	"github.com/leasewrap/leasewrap/lease/session"
)

func benchLocker(b *testing.B, root, instance string) *session.Locker {
	b.Helper()
	epoch := uint32(6)
	l, err := session.NewLocker(session.LockerConfig{
		SessionID: session.MustParseID("5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42"),
		Root:      root,
		OwnerContext: session.OwnerContext{
			StorageWriterEpoch: &epoch,
			DaemonInstanceID:   session.Some(instance),
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkLockerAcquireFinish registers an owner and removes it again,
// the in-process part of `leasewrap session run`.
func BenchmarkLockerAcquireFinish(b *testing.B) {
	l := benchLocker(b, b.TempDir(), "bench")
	leasetest.BenchAcquireFinish(b, l.Acquire, lease.Result{})
}

// BenchmarkLockerAcquireHeld is one failed attempt on a session owned by
// another instance: what a waiting wrapper pays per retry.
func BenchmarkLockerAcquireHeld(b *testing.B) {
	root := b.TempDir()
	ctx := context.Background()
	ls, err := benchLocker(b, root, "holder").Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer ls.Finish(ctx, lease.Result{})
	leasetest.BenchAcquireHeld(b, benchLocker(b, root, "waiter").Acquire)
}
