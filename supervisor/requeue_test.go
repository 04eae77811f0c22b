package supervisor_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/supervisor"
)

// queueKind is a kind with a queue (as etcd lock and kube are) whose first
// grants are lost before the command can start: their anchoring renewal
// answers ErrLost, as when a rival overwrote the record right after the
// grant.
type queueKind struct {
	lostGrants int32 // grants whose first renewal fails
	grants     atomic.Int32
	finished   atomic.Int32
}

func (k *queueKind) Kind() string { return "testqueue" }
func (k *queueKind) Key() string  { return "q" }
func (k *queueKind) Acquire(ctx context.Context) (lease.Lease, error) {
	return nil, &lease.HeldError{Key: "q", Holder: "rival"}
}
func (k *queueKind) AcquireWait(ctx context.Context) (lease.Lease, error) {
	n := k.grants.Add(1)
	return &queueLease{k: k, lost: n <= k.lostGrants}, nil
}

type queueLease struct {
	k    *queueKind
	lost bool
}

func (l *queueLease) Holder() string        { return "me" }
func (l *queueLease) Env() []string         { return nil }
func (l *queueLease) TTL() time.Duration    { return time.Minute }
func (l *queueLease) Done() <-chan struct{} { return nil }
func (l *queueLease) Renew(context.Context) error {
	if l.lost {
		return fmt.Errorf("overwritten by a rival: %w", lease.ErrLost)
	}
	return nil
}
func (l *queueLease) Finish(context.Context, lease.Result) error {
	l.k.finished.Add(1)
	return nil
}

// A queued waiter whose grant is lost before its command starts lost its
// place in the queue, not a lease: it queues again while --wait lasts and
// runs the command once it holds a lease it could renew; only a wait that
// runs out is a conflict.
func TestQueuedWaiterQueuesAgainWhenTheGrantIsLostBeforeTheStart(t *testing.T) {
	k := &queueKind{lostGrants: 2}
	res, err := supervisor.Run(context.Background(), supervisor.Config{
		Locker: k, Argv: []string{"true"}, Wait: time.Minute, KillGrace: time.Second,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Outcome != supervisor.Ran || res.ExitCode != 0 {
		t.Fatalf("want the command run after queueing again, have %v (exit %d)", res.Outcome, res.ExitCode)
	}
	if g, f := k.grants.Load(), k.finished.Load(); g != 3 || f != 3 {
		t.Fatalf("want 3 grants, each settled once (2 lost before the start, 1 run), have %d grants, %d settled", g, f)
	}

	// Every grant lost: the wait runs out, a conflict, nothing ran.
	k = &queueKind{lostGrants: 1 << 30}
	res, err = supervisor.Run(context.Background(), supervisor.Config{
		Locker: k, Argv: []string{"false"}, Wait: 300 * time.Millisecond, KillGrace: time.Second,
	})
	if err != nil && !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("Run: %v", err)
	}
	if err == nil && res.Outcome != supervisor.Conflict {
		t.Fatalf("want a conflict once the wait ran out, have %v (exit %d)", res.Outcome, res.ExitCode)
	}
}
