package lock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
	"github.com/leasewrap/leasewrap/pg/internal/store"
	"github.com/leasewrap/leasewrap/pg/lock"
	"github.com/leasewrap/leasewrap/pg/table"
)

func newLocker(t *testing.T, srv *pgtest.Server, holder string) *lock.Locker {
	t.Helper()
	cc, err := pgx.ParseConfig(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(cc, 5*time.Second, `"leasewrap_lease"`)
	t.Cleanup(st.Close)
	l, err := lock.New(lock.Config{Store: st, Name: "q", TTL: 4 * time.Second, Holder: holder})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestQuarantineAfterTimelineChange: once the meta row's timeline differs
// from the server's (as after a promotion), nothing is granted until the
// quarantine (largest TTL + margin) is over, and the fence then jumps to
// the new timeline; a renewal of the old holder still works only while
// its row is live.
func TestQuarantineAfterTimelineChange(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := context.Background()
	a := newLocker(t, srv, "a")
	le, err := a.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := le.Finish(ctx, lease.Result{}); err != nil {
		t.Fatal(err)
	}
	// Pretend the last timeline seen was 7 (the server is on 1), with a
	// largest TTL of 4 s: the next attempt starts a 9 s quarantine.
	srv.Exec(t, "UPDATE leasewrap_lease SET fence = 7, ttl_seconds = 4 WHERE kind = 'meta'")
	b := newLocker(t, srv, "b")
	_, err = b.Acquire(ctx)
	var held *lease.HeldError
	if !errors.As(err, &held) || !strings.Contains(held.Detail, "timeline is 1 (before: 7)") {
		t.Fatalf("want held by the quarantine naming the timelines, have %v", err)
	}
	var left float64
	srv.QueryRow(t, []any{&left}, "SELECT extract(epoch FROM expires_at - statement_timestamp())::float8 FROM leasewrap_lease WHERE kind = 'meta'")
	if want := (4*time.Second + table.QuarantineMargin).Seconds(); left <= 0 || left > want {
		t.Fatalf("want the quarantine to end within %vs, have %vs", want, left)
	}
	// End it early by hand: the acquisition then succeeds.
	srv.Exec(t, "UPDATE leasewrap_lease SET expires_at = statement_timestamp() WHERE kind = 'meta'")
	le, err = b.Acquire(ctx)
	if err != nil {
		t.Fatalf("after the quarantine: %v", err)
	}
	if f := le.(*lock.Lease).Fence(); f < 1<<table.FenceShift {
		t.Fatalf("want a fence from the timeline on, have %d", f)
	}
	if err := le.Renew(ctx); err != nil {
		t.Fatalf("renew: %v", err)
	}
}

// TestRenewNeverRetakes: a renewal of a row another holder took matches
// nothing (lost) and leaves the other's row as it was.
func TestRenewNeverRetakes(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := context.Background()
	le, err := newLocker(t, srv, "a").Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	srv.Exec(t, "UPDATE leasewrap_lease SET expires_at = statement_timestamp() WHERE kind = 'pg'")
	other, err := newLocker(t, srv, "b").Acquire(ctx)
	if err != nil {
		t.Fatalf("b after a's row expired: %v", err)
	}
	if err := le.Renew(ctx); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("a's renewal: want lost, have %v", err)
	}
	if err := le.Finish(ctx, lease.Result{}); err != nil {
		t.Fatal(err)
	}
	var holder string
	var fence int64
	srv.QueryRow(t, []any{&holder, &fence}, "SELECT holder, fence FROM leasewrap_lease WHERE kind = 'pg' AND name = 'q'")
	if holder != "b" || fence != other.(*lock.Lease).Fence() || fence <= le.(*lock.Lease).Fence() {
		t.Fatalf("want b's row untouched with a larger fence, have %s %d", holder, fence)
	}
}

// TestWaiterWokenByRelease: a waiter's Wake returns woken (not at its
// max) once the holder releases: the release's NOTIFY reached it. Another
// name's release does not wake it.
func TestWaiterWokenByRelease(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := context.Background()
	holder := newLocker(t, srv, "a")
	le, err := holder.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cc, _ := pgx.ParseConfig(srv.DSN())
	st := store.New(cc, 5*time.Second, `"leasewrap_lease"`)
	t.Cleanup(st.Close)
	waiter, err := lock.New(lock.Config{Store: st, Name: "q", TTL: 4 * time.Second, Holder: "b", Notify: true})
	if err != nil {
		t.Fatal(err)
	}
	w, err := waiter.Notify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	other, err := lock.New(lock.Config{Store: st, Name: "other", TTL: 4 * time.Second, Holder: "c"})
	if err != nil {
		t.Fatal(err)
	}
	ole, err := other.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ole.Finish(ctx, lease.Result{}); err != nil {
		t.Fatal(err)
	}
	if woke, err := w.Wait(ctx, nil, 300*time.Millisecond); woke || err != nil {
		t.Fatalf("another name's release: want no wake-up, have %v %v", woke, err)
	}
	if err := le.Finish(ctx, lease.Result{}); err != nil {
		t.Fatal(err)
	}
	if woke, err := w.Wait(ctx, nil, pgtest.Scale(30*time.Second)); !woke || err != nil {
		t.Fatalf("our name's release: want a wake-up, have %v %v", woke, err)
	}
}

// TestLockedRowIsHeld: an acquisition that waits for the row's lock (a
// statement of another session holds it) past its bound is contention,
// not an unreachable server; once the lock goes, it acquires.
func TestLockedRowIsHeld(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := context.Background()
	le, err := newLocker(t, srv, "a").Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := le.Finish(ctx, lease.Result{}); err != nil {
		t.Fatal(err)
	}
	c := pgtest.Connect(t, srv.DSN())
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1 FROM leasewrap_lease WHERE kind = 'pg' AND name = 'q' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	cc, _ := pgx.ParseConfig(srv.DSN())
	st := store.New(cc, time.Second, `"leasewrap_lease"`)
	t.Cleanup(st.Close)
	b, err := lock.New(lock.Config{Store: st, Name: "q", TTL: 4 * time.Second, Holder: "b", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(ctx); !errors.Is(err, lease.ErrHeld) || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("while the row is locked: want held, have %v", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(ctx); err != nil {
		t.Fatalf("after the lock went: %v", err)
	}
}
