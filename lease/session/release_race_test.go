package session

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// A record that vanishes between the directory listing and its read is an
// owner that released (Release removes its record without the
// coordinator), not undecodable metadata: an acquirer racing a release
// must see the owner or nothing, never *UnverifiableError. Found by the
// hand-over benchmark (bench/lwbench), where a waiting wrapper was refused
// with exit 65 in 2 of 10 hand-overs.
func TestAcquireRacingReleaseIsNeverUnverifiable(t *testing.T) {
	root := t.TempDir()
	sid := MustParseID("5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42")
	epoch := uint32(6)
	store := func(pid int, instance string) (*Store, OwnerContext) {
		s := NewStore(root)
		s.pid = func() int { return pid }
		return s, OwnerContext{StorageWriterEpoch: &epoch, DaemonInstanceID: Some(instance)}
	}
	holder, hoc := store(4000001, "holder")
	waiter, woc := store(4000002, "waiter")

	deadline := time.Now().Add(2 * time.Second)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for time.Now().Before(deadline) {
			if g, err := holder.Acquire(context.Background(), sid, hoc); err == nil {
				time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
				g.Release()
			}
		}
	}()
	var acquired, owned int
	for time.Now().Before(deadline) {
		g, err := waiter.Acquire(context.Background(), sid, woc)
		var o *OwnedError
		var u *UnverifiableError
		switch {
		case err == nil:
			acquired++
			g.Release()
		case errors.As(err, &o):
			owned++
		case errors.As(err, &u):
			t.Fatalf("acquire racing a release: want the owner or success, have %v", err)
		default:
			t.Fatalf("acquire: %v", err)
		}
	}
	<-done
	t.Logf("waiter acquired %d times, saw the holder %d times", acquired, owned)
}
