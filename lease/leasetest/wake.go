package leasetest

import (
	"context"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/lease"
)

// Waited is a waiter's Wake after one short Wait, as the supervisor's
// attempt loop leaves it between two attempts (a kind that prepares work
// while waiting has done it). It is closed when the test ends.
func Waited(t testing.TB, n lease.Notifier) lease.Wake {
	t.Helper()
	w, err := n.Notify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if _, err := w.Wait(context.Background(), nil, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	return w
}
