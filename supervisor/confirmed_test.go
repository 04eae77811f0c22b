package supervisor_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/supervisor"
)

// confirmedKind is a queued kind whose lease reports when it was last
// confirmed (lease.Confirmed), as the etcd kinds do.
type confirmedKind struct {
	confirmed time.Time // what the granted lease's ConfirmedAt says
	mu        sync.Mutex
	log       []string // "renew" and "started", in order
	renewedAt time.Time
}

func (k *confirmedKind) Kind() string { return "testconfirmed" }
func (k *confirmedKind) Key() string  { return "c" }
func (k *confirmedKind) Acquire(context.Context) (lease.Lease, error) {
	return nil, &lease.HeldError{Key: "c", Holder: "rival"}
}
func (k *confirmedKind) AcquireWait(context.Context) (lease.Lease, error) {
	return &confirmedLease{k: k}, nil
}
func (k *confirmedKind) note(s string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.log = append(k.log, s)
}

type confirmedLease struct{ k *confirmedKind }

func (l *confirmedLease) Holder() string         { return "me" }
func (l *confirmedLease) Env() []string          { return nil }
func (l *confirmedLease) TTL() time.Duration     { return time.Minute }
func (l *confirmedLease) Done() <-chan struct{}  { return nil }
func (l *confirmedLease) ConfirmedAt() time.Time { return l.k.confirmed }
func (l *confirmedLease) Renew(context.Context) error {
	l.k.mu.Lock()
	if l.k.renewedAt.IsZero() {
		l.k.renewedAt = time.Now()
	}
	l.k.mu.Unlock()
	l.k.note("renew")
	return nil
}
func (l *confirmedLease) Finish(context.Context, lease.Result) error { return nil }

// A queued lease granted with a recent confirmation starts its job with
// the fence counted from that confirmation and no renewal first; one whose
// confirmation is too old for the start margin (a waiter that was paused
// past it) is renewed before the job starts, and the fence counts from
// that renewal's start. TTL 1m, kill grace 1s, margin 3s, period 20s: the
// fence falls 56s after a confirmation, so one 40s old leaves 16s, less
// than a period.
func TestQueuedLeaseStartsUnderItsLastConfirmation(t *testing.T) {
	const ttl, grace, margin = time.Minute, time.Second, 3 * time.Second
	for _, tc := range []struct {
		name       string
		age        time.Duration
		renewFirst bool
	}{
		{"recent", 2 * time.Second, false},
		{"too-old", 40 * time.Second, true},
		{"none", -1, true}, // the zero time: never confirmed
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := &confirmedKind{}
			if tc.age >= 0 {
				k.confirmed = time.Now().Add(-tc.age)
			}
			var fence time.Time
			res, err := supervisor.Run(context.Background(), supervisor.Config{
				Locker: k, Argv: []string{"true"}, Wait: time.Minute, KillGrace: grace,
				OnEvent: func(e supervisor.Event) {
					switch e.Type {
					case supervisor.EventAcquired:
						fence = e.Fence
					case supervisor.EventStarted:
						k.note("started")
					}
				},
			})
			if err != nil || res.Outcome != supervisor.Ran {
				t.Fatalf("want the command run, have %v, %v", res.Outcome, err)
			}
			k.mu.Lock()
			defer k.mu.Unlock()
			if len(k.log) == 0 {
				t.Fatal("no start recorded")
			}
			if renewedFirst := k.log[0] == "renew"; renewedFirst != tc.renewFirst {
				t.Fatalf("want a renewal before the start: %v, have the order %v", tc.renewFirst, k.log)
			}
			if !tc.renewFirst {
				if want := k.confirmed.Add(ttl - grace - margin); !fence.Equal(want) {
					t.Fatalf("want the fence counted from the confirmation (%v), have %v", want, fence)
				}
				return
			}
			// Counted from the renewal's start: no later than the
			// instant Renew was entered.
			if latest := k.renewedAt.Add(ttl - grace - margin); fence.After(latest) || fence.Before(latest.Add(-time.Second)) {
				t.Fatalf("want the fence counted from the renewal before the start (≈ %v), have %v", latest, fence)
			}
		})
	}
}
