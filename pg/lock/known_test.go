package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
	"github.com/leasewrap/leasewrap/pg/internal/store"
	"github.com/leasewrap/leasewrap/pg/lock"
)

// clock is a monotonic clock the test moves by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// waiterOf is a Locker for name on its own store, its clock the test's.
func waiterOf(t *testing.T, srv *pgtest.Server, name, holder string, ttl time.Duration, notify bool, c *clock) *lock.Locker {
	t.Helper()
	cc, err := pgx.ParseConfig(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(cc, 5*time.Second, `"leasewrap_lease"`)
	t.Cleanup(st.Close)
	l, err := lock.New(lock.Config{Store: st, Name: name, TTL: ttl, Holder: holder, Notify: notify})
	if err != nil {
		t.Fatal(err)
	}
	if c != nil {
		lock.SetNow(l, c.now)
	}
	return l
}

// statements is what the server ran since the last reset (pg_stat_statements),
// the counting itself left out; it resets the count.
func statements(t *testing.T, srv *pgtest.Server) int {
	t.Helper()
	n := 0
	for _, r := range srv.Query(t, "SELECT calls FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'") {
		n += int(r[0].(int64))
	}
	srv.Exec(t, "SELECT pg_stat_statements_reset()")
	return n
}

// TestKnownHoldSparesStatements: a waiter that LISTENs asks the server
// about a held row once per safety poll or per the row's remaining
// lifetime, not once per attempt. Over a minute of attempts at the
// supervisor's longest back-off (250 ms on the test's clock) it sends at
// least 10 times fewer statements than a waiter that does not LISTEN.
// The holder's release still reaches it by NOTIFY: the attempt after the
// wake-up takes the lease with the clock standing still.
func TestKnownHoldSparesStatements(t *testing.T) {
	srv := pgtest.Start(t, pgtest.Setting("shared_preload_libraries", "pg_stat_statements"),
		pgtest.Setting("pg_stat_statements.track", "all"))
	srv.Exec(t, "CREATE EXTENSION pg_stat_statements")
	ctx := context.Background()
	// A long TTL: the row stays live in real time however slow the machine.
	le, err := waiterOf(t, srv, "q", "a", 2*time.Minute, false, nil).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	minute := func(notify bool) (*lock.Locker, lease.Wake, int) {
		c := &clock{t: time.Now()}
		l := waiterOf(t, srv, "q", "b", 4*time.Second, notify, c)
		statements(t, srv)
		w, err := l.Notify(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		for range 240 {
			_, err := l.Acquire(ctx)
			if !errors.Is(err, lease.ErrHeld) {
				t.Fatalf("want held, have %v", err)
			}
			if _, err := w.Wait(ctx, err, time.Millisecond); err != nil {
				t.Fatal(err)
			}
			c.t = c.t.Add(250 * time.Millisecond)
		}
		return l, w, statements(t, srv)
	}
	_, _, polling := minute(false)
	l, w, listening := minute(true)
	t.Logf("statements in a minute of a waiter's attempts: %d without LISTEN, %d with", polling, listening)
	if listening == 0 || polling < 10*listening {
		t.Fatalf("want at least 10x fewer statements with LISTEN, have %d without and %d with", polling, listening)
	}

	// The hold is known after an attempt: the next is answered without a
	// statement.
	for range 2 {
		if _, err := l.Acquire(ctx); !errors.Is(err, lease.ErrHeld) {
			t.Fatalf("want held, have %v", err)
		}
	}
	statements(t, srv)
	if _, err := l.Acquire(ctx); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("want held, have %v", err)
	}
	if n := statements(t, srv); n != 0 {
		t.Fatalf("a known hold: want no statement, have %d", n)
	}
	if err := le.Finish(ctx, lease.Result{}); err != nil {
		t.Fatal(err)
	}
	if woke, err := w.Wait(ctx, nil, pgtest.Scale(30*time.Second)); !woke || err != nil {
		t.Fatalf("the release: want a wake-up, have %v %v", woke, err)
	}
	// The clock stands still: only the NOTIFY made the hold unknown.
	if _, err := l.Acquire(ctx); err != nil {
		t.Fatalf("after the release's NOTIFY: want the lease, have %v", err)
	}
}

// TestKnownHoldEnds: a known hold lasts until the row's remaining
// lifetime as the server computed it has passed since the statement was
// sent, and no longer than the LISTEN connection it was learnt under.
// Through no LISTEN (a pooler, --no-notify) every attempt asks.
func TestKnownHoldEnds(t *testing.T) {
	srv := pgtest.Start(t, pgtest.Setting("shared_preload_libraries", "pg_stat_statements"),
		pgtest.Setting("pg_stat_statements.track", "all"))
	srv.Exec(t, "CREATE EXTENSION pg_stat_statements")
	ctx := context.Background()
	if _, err := waiterOf(t, srv, "r", "a", 2*time.Minute, false, nil).Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	// A remaining lifetime (a minute, set on the server) below the safety
	// poll (an hour here).
	srv.Exec(t, "UPDATE leasewrap_lease SET expires_at = statement_timestamp() + interval '1 min' WHERE kind = 'pg' AND name = 'r'")
	c := &clock{t: time.Now()}
	l := waiterOf(t, srv, "r", "b", 4*time.Second, true, c)
	lock.SetSafetyPoll(l, time.Hour)
	w, err := l.Notify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	asks := func(what string, want bool) {
		t.Helper()
		statements(t, srv)
		if _, _, err := l.Try(ctx); err != nil {
			t.Fatal(err)
		}
		if n := statements(t, srv); (n > 0) != want {
			t.Fatalf("%s: want a statement %v, have %d statements", what, want, n)
		}
	}
	start := c.t
	_, row, err := l.Try(ctx)
	if err != nil || row == nil || !row.Live {
		t.Fatalf("want the live row, have %v %v", row, err)
	}
	left := row.ExpiresAt.Sub(row.ServerTime)
	if left <= 0 || left > time.Minute {
		t.Fatalf("want a remaining lifetime in (0, 1m], have %v", left)
	}
	c.t = start.Add(left - time.Millisecond)
	asks("just before the row may expire", false)
	c.t = start.Add(left)
	asks("when the row may have expired", true)

	// A dropped LISTEN connection: a Wait finds it gone, and the attempt
	// after it asks (the clock stands still: nothing else would make it).
	asks("a known hold again", false)
	srv.Exec(t, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'")
	deadline := time.Now().Add(pgtest.Scale(30 * time.Second))
	for {
		if _, err := w.Wait(ctx, nil, 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		statements(t, srv)
		if _, _, err := l.Try(ctx); err != nil {
			t.Fatal(err)
		}
		if statements(t, srv) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("after the LISTEN connection dropped: the attempts never asked the server")
		}
	}

	// Without LISTEN every attempt asks.
	p := waiterOf(t, srv, "r", "p", 4*time.Second, false, c)
	pw, err := p.Notify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	for i := range 3 {
		statements(t, srv)
		if _, _, err := p.Try(ctx); err != nil {
			t.Fatal(err)
		}
		if n := statements(t, srv); n == 0 {
			t.Fatalf("attempt %d without LISTEN: want statements, have none", i)
		}
	}
}
