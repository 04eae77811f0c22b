package claim

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/lease"
)

func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

func newTestLocker(t *testing.T, cfg LockerConfig) *Locker {
	t.Helper()
	if cfg.Root == "" {
		cfg.Root = t.TempDir()
	}
	if cfg.EventsDir == "" {
		cfg.EventsDir = cfg.Root
	}
	if cfg.Getenv == nil {
		cfg.Getenv = testEnv(nil)
	}
	l, err := NewLocker(cfg)
	if err != nil {
		t.Fatalf("NewLocker: %v", err)
	}
	return l
}

func TestNewLockerValidates(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		name string
		cfg  LockerConfig
		want string
	}{
		{"empty key", LockerConfig{Holder: "h", Root: root}, "key must be non-empty"},
		{"empty holder", LockerConfig{Key: "k", Root: root}, "holder must be non-empty"},
		{"ttl too short", LockerConfig{Key: "k", Holder: "h", Root: root, TTL: 59 * time.Second}, "out of range"},
		{"ttl too long", LockerConfig{Key: "k", Holder: "h", Root: root, TTL: 25 * time.Hour}, "out of range"},
		{"ttl sub-millisecond", LockerConfig{Key: "k", Holder: "h", Root: root, TTL: time.Minute + time.Microsecond}, "whole number of milliseconds"},
		{"no root for key", LockerConfig{Key: "walker:x", Holder: "h", Getenv: testEnv(nil)}, "no claims root"},
		{"bad metadata", LockerConfig{Key: "k", Holder: "h", Root: root, Metadata: Metadata{{Key: "c", Value: make(chan int)}}}, "not JSON-like"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewLocker(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want error containing %q, have %v", tc.want, err)
			}
		})
	}
}

func TestLockerAcquireRecordsAnchorPIDAndReleases(t *testing.T) {
	child := testutil.Sleeper(t)
	l := newTestLocker(t, LockerConfig{Key: "session:lk", Holder: "wrap:a", Reason: "test", Metadata: Metadata{{Key: "b", Value: 1}, {Key: "a", Value: "x"}}})
	var _ lease.Anchor = l
	if l.Kind() != "claim" || l.Key() != "session:lk" || l.Holder() != "wrap:a" {
		t.Fatalf("identity: have %s %s %s", l.Kind(), l.Key(), l.Holder())
	}
	ls, err := l.AcquireAnchored(t.Context(), child.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ls.(lease.FileHolder); ok || ls.Env() != nil || ls.TTL() != 0 {
		t.Errorf("want no file, no env, TTL 0; have %T %v %v", ls, ls.Env(), ls.TTL())
	}
	st := l.claims.Status("session:lk")
	if st.State != Live || st.Record.PID != child.Pid() {
		t.Fatalf("want live claim of pid %d, have %+v", child.Pid(), st)
	}
	if js, _ := st.Record.Metadata.MarshalJSON(); string(js) != `{"b":1,"a":"x"}` {
		t.Errorf("want the metadata in its given order, have %s", js)
	}
	if err := ls.Renew(t.Context()); err != nil {
		t.Errorf("PID claim still ours: want nil, have %v", err)
	}
	if err := ls.Finish(context.Background(), lease.Result{}); err != nil {
		t.Fatal(err)
	}
	if st := l.claims.Status("session:lk"); st.State != Free {
		t.Errorf("want free after Finish, have %s", st.State)
	}
	if err := ls.Renew(t.Context()); !errors.Is(err, lease.ErrLost) {
		t.Errorf("after release: want ErrLost, have %v", err)
	}
}

func TestLockerHeldAndRefused(t *testing.T) {
	child := testutil.Sleeper(t)
	root := t.TempDir()
	owner := newTestLocker(t, LockerConfig{Key: "session:h", Holder: "owner", Root: root})
	if _, err := owner.AcquireAnchored(t.Context(), child.Pid()); err != nil {
		t.Fatal(err)
	}
	other := newTestLocker(t, LockerConfig{Key: "session:h", Holder: "other", Root: root})
	_, err := other.AcquireAnchored(t.Context(), os.Getpid())
	var held *lease.HeldError
	if !errors.As(err, &held) || held.Holder != "owner" || held.PID != child.Pid() || held.Kind != "claim" {
		t.Fatalf("want *lease.HeldError naming owner pid %d, have %v", child.Pid(), err)
	}
	path := claimFile(root, "session:c")
	os.MkdirAll(claimsDir(root), 0o755)
	os.WriteFile(path, []byte("schema_version: 9\nkey: k\nholder: h\nacquired_at: 1\npid: 1\nhost: x\n"), 0o644)
	bad := newTestLocker(t, LockerConfig{Key: "session:c", Holder: "h", Root: root})
	_, err = bad.AcquireAnchored(t.Context(), os.Getpid())
	if !errors.Is(err, lease.ErrRefused) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "move it aside") {
		t.Errorf("want ErrRefused naming %s and the fix, have %v", path, err)
	}
}

func TestLockerRenewTTLAndLoss(t *testing.T) {
	child := testutil.Sleeper(t)
	l := newTestLocker(t, LockerConfig{Key: "node:ttl", Holder: "me", TTL: time.Minute})
	ls, err := l.AcquireAnchored(t.Context(), child.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if ls.TTL() != time.Minute {
		t.Errorf("want TTL 1m, have %v", ls.TTL())
	}
	if err := ls.Renew(t.Context()); err != nil {
		t.Fatalf("want renewed, have %v", err)
	}
	// A busy recovery mutex is transient, not a loss.
	path, _ := l.claims.Path("node:ttl")
	os.Mkdir(recoveryMutex(path), 0o755)
	if err := ls.Renew(t.Context()); err == nil || errors.Is(err, lease.ErrLost) {
		t.Errorf("busy mutex: want a transient error, have %v", err)
	}
	os.Remove(recoveryMutex(path))
	// Taken over by another holder: lost.
	rec := readClaimMust(t, path)
	rec.Holder = "thief"
	writeRecord(t, path, rec)
	if err := ls.Renew(t.Context()); !errors.Is(err, lease.ErrLost) {
		t.Errorf("other holder: want ErrLost, have %v", err)
	}
	// Finish must not remove the thief's claim.
	ls.Finish(context.Background(), lease.Result{})
	if got := readClaimMust(t, path); got.Holder != "thief" {
		t.Errorf("Finish touched another holder's claim: %s", got.Holder)
	}
}

func TestLockerPIDClaimLostWhenReanchoredOrCorrupted(t *testing.T) {
	child := testutil.Sleeper(t)
	l := newTestLocker(t, LockerConfig{Key: "session:p", Holder: "me"})
	ls, err := l.AcquireAnchored(t.Context(), child.Pid())
	if err != nil {
		t.Fatal(err)
	}
	path, _ := l.claims.Path("session:p")
	rec := readClaimMust(t, path)
	rec.PID = os.Getpid() // same holder, another process
	writeRecord(t, path, rec)
	if err := ls.Renew(t.Context()); !errors.Is(err, lease.ErrLost) {
		t.Errorf("other pid: want ErrLost, have %v", err)
	}
	os.WriteFile(path, []byte("[not, a, mapping]"), 0o644)
	if err := ls.Renew(t.Context()); !errors.Is(err, lease.ErrLost) {
		t.Errorf("corrupted: want ErrLost, have %v", err)
	}
}

func TestLockerWatchesTheClaimFileAndCreatesItsDir(t *testing.T) {
	root := t.TempDir()
	l := newTestLocker(t, LockerConfig{Key: "session:w", Holder: "h", Root: root})
	w, err := l.Notify(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if fi, err := os.Stat(claimsDir(root)); err != nil || !fi.IsDir() {
		t.Fatalf("want the directory created, have %v", err)
	}
	// Another name in the directory does not wake the waiter; the claim
	// file does.
	os.WriteFile(filepath.Join(claimsDir(root), "other.lock"), nil, 0o644)
	if woke, err := w.Wait(t.Context(), nil, 50*time.Millisecond); woke || err != nil {
		t.Fatalf("another file: want no wake-up, have %v %v", woke, err)
	}
	os.WriteFile(filepath.Join(claimsDir(root), "session%3Aw.lock"), nil, 0o644)
	if woke, err := w.Wait(t.Context(), nil, 10*time.Second); !woke || err != nil {
		t.Fatalf("the claim file: want a wake-up, have %v %v", woke, err)
	}
}

func readClaimMust(t *testing.T, path string) *Record {
	t.Helper()
	rec, err := readClaimFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestLockerProbeReportsOnlyAVisiblyHeldClaim(t *testing.T) {
	child := testutil.Sleeper(t)
	root := t.TempDir()
	other := newTestLocker(t, LockerConfig{Key: "session:p", Holder: "other", Root: root})
	if err := other.Probe(t.Context()); err != nil {
		t.Fatalf("free claim: want nil, have %v", err)
	}
	owner := newTestLocker(t, LockerConfig{Key: "session:p", Holder: "owner", Root: root})
	if _, err := owner.AcquireAnchored(t.Context(), child.Pid()); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(claimFile(root, "session:p"))
	var held *lease.HeldError
	if err := other.Probe(t.Context()); !errors.As(err, &held) || held.Holder != "owner" || held.PID != child.Pid() {
		t.Fatalf("live other holder: want *lease.HeldError naming owner, have %v", err)
	}
	if err := owner.Probe(t.Context()); !errors.As(err, &held) || held.Holder != "owner" {
		t.Fatalf("a live claim under our own holder name: want *lease.HeldError (a run verb never re-acquires), have %v", err)
	}
	if after, _ := os.ReadFile(claimFile(root, "session:p")); string(after) != string(before) {
		t.Fatal("Probe changed the claim file")
	}
	child.Kill(t, 10*time.Second)
	if err := other.Probe(t.Context()); err != nil {
		t.Fatalf("stale claim: want nil (Acquire reclaims), have %v", err)
	}
	os.WriteFile(claimFile(root, "session:p"), []byte("{not: [yaml"), 0o644)
	if err := other.Probe(t.Context()); err != nil {
		t.Fatalf("corrupted claim: want nil (Acquire refuses with the path), have %v", err)
	}
}

// The Locker defers its acquisition event until the child runs (Started),
// so a hand-over never waits on the events-log mutex before the child
// starts; Finish appends it first if Started never came, keeping order.
func TestLockerDefersTheAcquiredEventUntilStarted(t *testing.T) {
	child := testutil.Sleeper(t)
	events := func(root string) string {
		b, _ := os.ReadFile(filepath.Join(root, ".fno", "events.jsonl"))
		return string(b)
	}
	root := t.TempDir()
	l := newTestLocker(t, LockerConfig{Key: "session:d", Holder: "h", Root: root})
	ls, err := l.AcquireAnchored(t.Context(), child.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if got := events(root); got != "" {
		t.Fatalf("want no event before Started, have %q", got)
	}
	l.Started(t.Context(), ls)
	if got := events(root); strings.Count(got, `"type":"claim_acquired"`) != 1 {
		t.Fatalf("want claim_acquired after Started, have %q", got)
	}
	if err := ls.Finish(t.Context(), lease.Result{}); err != nil {
		t.Fatal(err)
	}
	if got := events(root); strings.Count(got, `"type":"claim_acquired"`) != 1 || !strings.Contains(got, `"type":"claim_released"`) {
		t.Fatalf("want acquired once, then released, have %q", got)
	}

	root = t.TempDir()
	l = newTestLocker(t, LockerConfig{Key: "session:d", Holder: "h", Root: root})
	if ls, err = l.AcquireAnchored(t.Context(), child.Pid()); err != nil {
		t.Fatal(err)
	}
	if err := ls.Finish(t.Context(), lease.Result{}); err != nil {
		t.Fatal(err)
	}
	got := events(root)
	if a, r := strings.Index(got, "claim_acquired"), strings.Index(got, "claim_released"); a < 0 || r < a {
		t.Fatalf("without Started: want acquired then released, have %q", got)
	}
}

// TestLockerSameHolderIsAConflict: a run verb's Locker treats a live claim
// under its own holder name like any other holder's (a second wrapper
// given the same --holder must not run, nor rewrite the first's pid); a
// stale one is reclaimed; the protocol's Acquire still re-acquires
// idempotently.
func TestLockerSameHolderIsAConflict(t *testing.T) {
	first, second := testutil.Sleeper(t), testutil.Sleeper(t)
	root := t.TempDir()
	a := newTestLocker(t, LockerConfig{Key: "nightly", Holder: "nightly", Root: root})
	b := newTestLocker(t, LockerConfig{Key: "nightly", Holder: "nightly", Root: root})
	if _, err := a.AcquireAnchored(t.Context(), first.Pid()); err != nil {
		t.Fatal(err)
	}
	path := claimFile(root, "nightly")
	before, _ := os.ReadFile(path)
	var held *lease.HeldError
	if _, err := b.AcquireAnchored(t.Context(), second.Pid()); !errors.As(err, &held) || held.PID != first.Pid() {
		t.Fatalf("same holder, live: want *lease.HeldError naming pid %d, have %v", first.Pid(), err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatalf("the refused Acquire rewrote the claim:\n%s\nwas:\n%s", after, before)
	}

	// The protocol's acquire (the admin verb) keeps its idempotent re-acquire.
	acq, err := a.claims.Acquire(t.Context(), "nightly", "nightly", AcquireOptions{PID: second.Pid()})
	if err != nil || acq.Event != EventIdempotentReacquire || acq.Record.PID != second.Pid() {
		t.Fatalf("protocol acquire, same holder: want an idempotent re-acquire naming pid %d, have %+v, %v", second.Pid(), acq, err)
	}

	// Stale under the same holder name: reclaimed, not re-acquired.
	second.Kill(t, 10*time.Second)
	ls, err := b.AcquireAnchored(t.Context(), first.Pid())
	if err != nil {
		t.Fatalf("same holder, stale: want a reclaim, have %v", err)
	}
	if got := readClaimMust(t, path); got.PID != first.Pid() {
		t.Fatalf("want the claim to name pid %d, have %d", first.Pid(), got.PID)
	}
	if pend := ls.(*claimLease).pending; len(pend) != 1 || pend[0].Type != EventStaleReclaimed {
		t.Fatalf("want a stale_reclaimed event, have %+v", pend)
	}
}
