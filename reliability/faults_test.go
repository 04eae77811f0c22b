package reliability

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// faultCase is one crash point under one kind. pre is a crash run first to
// leave the state the point needs (a stale claim, a dead reservation).
type faultCase struct {
	k     kind
	point string
	pre   string
	exit  int // the crashed run's child exit code
}

func faultCases() []faultCase {
	var cs []faultCase
	for _, k := range []kind{kindClaimPID} {
		for _, p := range []string{"claim.after-temp-write", "claim.after-link",
			"supervisor.after-start-before-anchor", "supervisor.after-anchor-before-release",
			"supervisor.before-finish", "claim.mid-release"} {
			cs = append(cs, faultCase{k: k, point: p})
		}
		for _, p := range []string{"claim.recovery-mutex-taken", "claim.mid-archive"} {
			cs = append(cs, faultCase{k: k, point: p, pre: "supervisor.after-anchor-before-release"})
		}
	}
	cs = append(cs, faultCase{k: kindClaimTTL, point: "claim.mid-renew"},
		faultCase{k: kindClaimTTL, point: "claim.replace-after-temp-write"})
	for _, p := range []string{"reserve.after-materializer-lease", "reserve.after-temp-write",
		"reserve.after-reserve", "supervisor.after-acquire-before-start", "reserve.mid-publish",
		"reserve.after-publish", "supervisor.before-finish"} {
		cs = append(cs, faultCase{k: kindReserve, point: p})
	}
	cs = append(cs, faultCase{k: kindReserve, point: "reserve.mid-release", exit: 3},
		faultCase{k: kindReserve, point: "reserve.replace-after-temp-write", pre: "reserve.after-reserve"},
		faultCase{k: kindReserve, point: "reserve.after-reclaim", pre: "reserve.after-reserve"})
	for _, p := range []string{"session.pre-publish", "supervisor.after-acquire-before-start",
		"supervisor.before-finish", "session.mid-release"} {
		cs = append(cs, faultCase{k: kindSession, point: p})
	}
	cs = append(cs, faultCase{k: kindSessionMigrate, point: "session.handoff"})
	return cs
}

// TestFaultPoints crashes leasewrap (SIGKILL, no clean-up) at every point
// under every kind, then checks the invariants: the point was reached; the
// leftovers are reclaimable by the independent reader's rules; a fresh
// leasewrap runs the key again, or replays a run that was published, and
// never re-runs it; no two holders overlapped; no foreign file changed; no
// descriptor leaked into a child; no process outlived the scenario.
func TestFaultPoints(t *testing.T) {
	for _, fc := range faultCases() {
		name := fc.k.name + "/" + fc.point
		if fc.pre != "" {
			name += "/after-" + fc.pre
		}
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			e := newEnv(t)
			foreignIntact := e.plantForeign()
			if fc.pre != "" {
				if r := e.run(fc.k, "pre", 50*time.Millisecond, 0, fc.pre); r.signal != 9 {
					t.Fatalf("precondition %s: want leasewrap killed at the point, have %v", fc.pre, r)
				}
				reapOrphans(nil, 10*time.Second)
			}
			hold := 100 * time.Millisecond
			if fc.k.name == kindClaimTTL.name {
				hold = time.Second // long enough for renewals
			}
			r := e.run(fc.k, "crashed", hold, fc.exit, fc.point)
			if r.signal != 9 {
				t.Fatalf("want leasewrap killed at %s, have %v", fc.point, r)
			}
			// A child already running when leasewrap died keeps the lease
			// until it exits (by design); let it finish, and reap gates.
			if left := reapOrphans(nil, 20*time.Second); len(left) > 0 {
				t.Fatalf("processes outlived the crashed run: %v", left)
			}
			published := checkLeftovers(t, e, fc.k)

			rec, blocked := e.recover(fc.k)
			if blocked != "" {
				t.Logf("blocked until time passed: %s", blocked)
			}
			spans := readWitness(t, e.witness)
			switch {
			case published >= 0:
				if rec.code != published || ranRecovery(spans) {
					t.Fatalf("published run must be replayed (exit %d), not re-run; have %v, ran=%v", published, rec, ranRecovery(spans))
				}
			case rec.code != 0 || !ranRecovery(spans):
				t.Fatalf("want the key recovered and run after the crash, have %v", rec)
			}
			checkSettled(t, e, fc.k)
			if err := checkNoOverlap(spans, nil); err != nil {
				t.Error(err)
			}
			if err := checkFDs(spans, fc.k.leaseFD); err != nil {
				t.Error(err)
			}
			foreignIntact(t)
			noOrphans(t)
			t.Logf("crashed at %s: %d witness spans, recovery exit %d, blocked: %q", fc.point, len(spans), rec.code, blocked)
		})
	}
}

// checkLeftovers classifies what the crash left with the independent
// reader: every leftover must be reclaimable (dead holder, no flock) or
// published. It returns the published exit code, or -1.
func checkLeftovers(t *testing.T, e *env, k kind) int {
	t.Helper()
	key := k.keyFor()
	switch {
	case k.isClaim():
		c, err := readClaimIndie(claimPath(e.claimRoot(), key))
		if os.IsNotExist(err) {
			return -1
		}
		if err != nil {
			t.Fatalf("crash left an unreadable claim: %v", err)
		}
		if pidAlive(c.PID) {
			t.Fatalf("crash left a claim whose pid %d still runs after every process of the scenario ended", c.PID)
		}
	case k.isSession():
		owners, err := readOwnersIndie(e.sessionRoot(), key)
		if err != nil {
			t.Fatalf("crash left an unreadable owner record: %v", err)
		}
		for _, o := range owners {
			if o.Live {
				t.Fatalf("crash left a live (flock held) owner record %s with no process running", o.Path)
			}
		}
	default:
		r, err := readReservationIndie(e.reserveHome(), key)
		if err != nil {
			t.Fatalf("crash left an unreadable reservation: %v", err)
		}
		if r == nil {
			return -1
		}
		code, ok, err := manifestExit(e.reserveHome(), r.RunID)
		if err != nil {
			t.Fatalf("published manifest unreadable: %v", err)
		}
		if ok {
			return code
		}
		if r.Creator == nil {
			t.Fatalf("crash left a legacy record %q (never reclaimable)", r.RunID)
		}
		if flockHeld(r.Creator.Lease) {
			t.Fatalf("crash left reservation %s with its materializer lease still locked", r.RunID)
		}
	}
	return -1
}

// checkSettled: after a clean run nothing holds the key, by both readers.
func checkSettled(t *testing.T, e *env, k kind) {
	t.Helper()
	key := k.keyFor()
	switch {
	case k.isClaim():
		path := claimPath(e.claimRoot(), key)
		want := `"state":"free"`
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			// Release removes only under the recovery mutex; a crashed
			// peer's young mutex makes it leave the claim of its (dead)
			// pid for the next acquirer: stale, never live.
			c, rerr := readClaimIndie(path)
			_, merr := os.Lstat(path + ".recovery.d")
			if rerr != nil || pidAlive(c.PID) || merr != nil {
				t.Errorf("claim file left after the recovery run released it, and not as a stale claim behind a busy recovery mutex (%v, %v)", rerr, merr)
			}
			t.Logf("release deferred: recovery mutex busy, stale claim of pid %d left to be reclaimed", c.PID)
			want = `"state":"stale"`
		}
		r := e.lw(nil, "claim", "status", key, "--root", e.claimRoot())
		if r.code != 0 || !strings.Contains(r.out, want) {
			t.Errorf("claim status after recovery: want %s, have %v", want, r)
		}
	case k.isSession():
		owners, err := readOwnersIndie(e.sessionRoot(), key)
		if err != nil || len(owners) != 0 {
			t.Errorf("owner records left after the recovery run: %+v (%v)", owners, err)
		}
		r := e.lw(nil, "session", "owners", key, "--root", e.sessionRoot())
		if r.code != 0 {
			t.Errorf("session owners after recovery: %v", r)
		}
	default:
		rec, err := readReservationIndie(e.reserveHome(), key)
		if err != nil || rec == nil {
			t.Fatalf("want the key's record naming a published run, have %+v (%v)", rec, err)
		}
		if _, ok, err := manifestExit(e.reserveHome(), rec.RunID); !ok || err != nil {
			t.Errorf("record names run %s, which is not published (%v)", rec.RunID, err)
		}
		r := e.lw(nil, "reserve", "lookup", key, "--home", e.reserveHome())
		var out struct {
			RunID     string `json:"run_id"`
			Published bool   `json:"published"`
			Record    struct {
				RunID string `json:"run_id"`
			} `json:"record"`
		}
		if err := json.Unmarshal([]byte(r.out), &out); err != nil || !out.Published || out.Record.RunID != rec.RunID {
			t.Errorf("reserve lookup disagrees with the independent reader (run %s published): %v", rec.RunID, r)
		}
	}
}

// TestIndependentHashMatchesCLI pins the independent reader's key hash to
// leasewrap's, so the reader really looks at the files leasewrap writes.
func TestIndependentHashMatchesCLI(t *testing.T) {
	e := newEnv(t)
	for _, key := range []string{"reliability-key", "export-2026-11-29", "ünïcode/..\n"} {
		r := e.lw(nil, "reserve", "hash", key)
		if !strings.Contains(r.out, fnv128("", "", key)) {
			t.Errorf("key %q: independent hash %s, leasewrap says %v", key, fnv128("", "", key), r)
		}
	}
}

// recover runs the key again after a crash. Two leftovers block a claim
// for a bounded time by the protocol, not forever: a recovery mutex (taken
// over once older than 120 s) and a TTL claim of a dead pid (suspect until
// expires_at). The first recovery must then be refused as a conflict (75)
// that names the cause; the test lets the time pass by ageing the mutex's
// mtime or the record's expires_at (what the clock would do) and tries
// again. blocked says what was waited out.
func (e *env) recover(k kind) (result, string) {
	e.t.Helper()
	var blocked []string
	mutex := claimPath(e.claimRoot(), k.keyFor()) + ".recovery.d"
	if _, err := os.Lstat(mutex); err == nil && k.isClaim() && !long() {
		// Each acquire waits 5 × 5 s on a held mutex before it reports;
		// the short battery skips that wait (the long one asserts it).
		old := time.Now().Add(-121 * time.Second)
		if err := os.Chtimes(mutex, old, old); err != nil {
			e.t.Fatal(err)
		}
		blocked = append(blocked, "recovery mutex (aged past 120 s before the first retry; RELIABILITY_LONG=1 asserts the exit-75 refusal)")
	}
	for i := 0; ; i++ {
		r := e.run(k, fmt.Sprintf("recovery-%d", i), 50*time.Millisecond, 0, "")
		if !k.isClaim() || r.code != 75 || i == 3 {
			return r, strings.Join(blocked, "; ")
		}
		path := claimPath(e.claimRoot(), k.keyFor())
		switch {
		case strings.Contains(r.err, "recovery mutex"):
			old := time.Now().Add(-121 * time.Second)
			if err := os.Chtimes(path+".recovery.d", old, old); err != nil {
				e.t.Fatal(err)
			}
			blocked = append(blocked, "recovery mutex (exit 75, aged past 120 s)")
		case strings.Contains(r.err, "suspect"):
			b, err := os.ReadFile(path)
			if err != nil {
				e.t.Fatal(err)
			}
			re := regexp.MustCompile(`(?m)^expires_at: \d+$`)
			past := fmt.Sprintf("expires_at: %d", time.Now().Add(-time.Second).UnixMilli())
			if err := os.WriteFile(path, re.ReplaceAll(b, []byte(past)), 0o644); err != nil {
				e.t.Fatal(err)
			}
			blocked = append(blocked, "suspect TTL claim of a dead pid (exit 75, expires_at passed)")
		default:
			e.t.Fatalf("recovery refused without naming a bounded cause: %v", r)
		}
	}
}

func ranRecovery(spans map[string]*span) bool {
	for id := range spans {
		if strings.HasPrefix(id, "recovery-") {
			return true
		}
	}
	return false
}

// long reports whether the long battery was asked for (make stress).
func long() bool { return os.Getenv("RELIABILITY_LONG") != "" }
