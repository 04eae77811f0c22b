package test

import (
	"fmt"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
)

// maxTTL is the largest TTL the failover tests' table grants (its meta
// row), so the quarantine after a promotion is maxTTL + 5 s.
const maxTTL = 6

// TestFailoverLosesAckedRenewal: a holder's renewal is acknowledged by
// the primary alone (the proxy to the standby paused), the primary dies,
// the standby is promoted and a waiter starts on it. Over several rounds:
// no overlap, every waiter runs, its fence above the old holder's.
func TestFailoverLosesAckedRenewal(t *testing.T) {
	t.Run("async", func(t *testing.T) { failoverRounds(t, 3, false, false) })
	t.Run("sync", func(t *testing.T) { failoverRounds(t, 2, true, false) })
	// The holder's DSN lists both hosts with target_session_attrs=read-write:
	// it may reach the promoted standby and keep its lease there, or lose
	// it; either way no one else runs meanwhile.
	t.Run("async-multihost", func(t *testing.T) { failoverRounds(t, 2, false, true) })
}

func failoverRounds(t *testing.T, rounds int, sync, multiHost bool) {
	primary := pgtest.Start(t)
	// The table and its meta row exist before the first standby copies
	// them; the meta row's largest TTL keeps the quarantine short.
	if code, out := runLW(t, nil, "pg", "run", "setup", "--dsn", primary.DSN(), "--ttl", "4s", "--", "true"); code != 0 {
		t.Fatalf("setup run: want 0, have %d:\n%s", code, out)
	}
	primary.Exec(t, fmt.Sprintf("update leasewrap_lease set ttl_seconds = %d where kind = 'meta' and name = ''", maxTTL))
	hist := tmp(t, "history")
	gone := map[int]int64{}
	deadline := time.Now().Add(pgtest.Scale(6 * time.Minute))
	for r := 1; r <= rounds && time.Now().Before(deadline); r++ {
		proxy := pgtest.StartProxy(t, primary.Addr())
		standby := pgtest.StartStandby(t, primary, proxy)
		if sync {
			primary.SetSync(t)
		}
		// The holder knows the primary alone: after the kill it cannot
		// renew anywhere, and trusts its last renewal, which the promoted
		// standby never saw, until its own deadline.
		dsn, job := primary.DSN(), time.Minute
		if multiHost {
			dsn = fmt.Sprintf("postgres://postgres:%s@%s,%s/postgres?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
				pgtest.Password, primary.Addr(), standby.Addr())
			job = 15 * time.Second // a holder that keeps its lease ends by itself
		}
		holder, hj := startHolder(t, hist, dsn, "fo", job)
		waitReplayed(t, primary, standby)
		proxy.Pause()
		// The holder's next renewal writes WAL the standby never gets.
		lsn := currentLSN(t, primary)
		testutil.WaitFor(t, "a renewal on the primary alone", pgtest.Scale(20*time.Second), func() bool {
			var ahead bool
			return primary.TryQueryRow([]any{&ahead}, "select pg_current_wal_lsn() > $1::pg_lsn", lsn) == nil && ahead
		})
		if !sync {
			// Renewals on the primary alone until the standby's copy of
			// the row has expired: without the quarantine the promoted
			// standby would grant the lease while the holder still trusts
			// its own. (With sync replication each renewal waits for the
			// standby and stays invisible: the holder cannot renew.)
			var standbyExpires time.Time
			standby.QueryRow(t, []any{&standbyExpires}, "select expires_at from leasewrap_lease where kind = 'pg' and name = 'fo'")
			testutil.WaitFor(t, "the holder to renew past the standby's expiry", pgtest.Scale(30*time.Second), func() bool {
				var renewed time.Time
				err := primary.TryQueryRow([]any{&renewed}, "select renewed_at from leasewrap_lease where kind = 'pg' and name = 'fo'")
				return err == nil && renewed.After(standbyExpires.Add(time.Second))
			})
		}
		if err := primary.Kill(); err != nil {
			t.Fatal(err)
		}
		standby.Promote(t)
		t.Logf("round %d: promoted %s, timeline %d", r, standby.Addr(), standby.Timeline(t))
		waiter := startWaiter(t, hist, standby.DSN(), "fo")
		code := holder.wait(t, pgtest.Scale(time.Minute))
		if code != 76 && !(multiHost && code == 0) {
			t.Errorf("round %d: the holder whose primary died: want 76 (lost), have %d:\n%s", r, code, holder.out.String())
		}
		t.Logf("round %d: holder exited %d", r, code)
		gone[hj.pid] = watchGone(t, hj.pid, pgtest.Scale(10*time.Second))
		if code := waiter.wait(t, pgtest.Scale(2*time.Minute)); code != 0 {
			t.Fatalf("round %d: waiter on the promoted standby: want 0, have %d:\n%s", r, code, waiter.out.String())
		}
		h := readHistory(t, hist)
		if n := len(h.jobs); n >= 2 {
			t.Logf("round %d: holder fence %s, waiter fence %s, waiter started %v after the holder's job was gone",
				r, h.jobs[n-2].fence, h.jobs[n-1].fence, time.Duration(h.jobs[n-1].start-gone[hj.pid]))
		}
		primary = standby
	}
	readHistory(t, hist).check(t, -1, -1, gone)
	if n := len(readHistory(t, hist).jobs); n < 2 {
		t.Errorf("want at least one round (2 jobs), have %d jobs", n)
	}
}

func currentLSN(t testing.TB, s *pgtest.Server) string {
	t.Helper()
	var lsn string
	s.QueryRow(t, []any{&lsn}, "select pg_current_wal_lsn()::text")
	return lsn
}

// waitReplayed waits until standby replayed everything primary wrote so
// far (the holder's acquisition included).
func waitReplayed(t testing.TB, primary, standby *pgtest.Server) {
	t.Helper()
	lsn := currentLSN(t, primary)
	testutil.WaitFor(t, "the standby to replay "+lsn, pgtest.Scale(30*time.Second), func() bool {
		var ok bool
		return standby.TryQueryRow([]any{&ok}, "select pg_last_wal_replay_lsn() >= $1::pg_lsn", lsn) == nil && ok
	})
}
