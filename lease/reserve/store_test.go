package reserve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/lease"
)

// testRecord is the seed's record(run_id, pid): pid_start_secs = pid, no
// materializer lease.
func testRecord(runID string, pid uint32) *Record {
	s := uint64(pid)
	return NewRecord(runID, NewCreator(pid, &s, time.Now(), ""))
}

func leaseResult(code int, now time.Time) lease.Result {
	return lease.Result{ExitCode: code, Argv: []string{"true"}, Started: now, Finished: now}
}

func newTestStore(t *testing.T) (*Store, context.Context) {
	t.Helper()
	return NewStore(t.TempDir()), context.Background()
}

func mustReserve(t *testing.T, s *Store, k Key, rec *Record) *Record {
	t.Helper()
	existing, err := s.Reserve(context.Background(), k, rec)
	if err != nil {
		t.Fatalf("reserve %s: %v", rec.RunID, err)
	}
	return existing
}

func lookupRunID(t *testing.T, s *Store, k Key) string {
	t.Helper()
	rec, err := s.Lookup(context.Background(), k)
	if err != nil {
		t.Fatalf("lookup: %v", err)
	}
	if rec == nil {
		return ""
	}
	return rec.RunID
}

// Seed: reserve_is_atomic_under_concurrency — 16 real processes race one
// key; exactly one wins and every caller resolves to the winner's run id.
func TestReserveIsAtomicUnderConcurrency(t *testing.T) {
	home := t.TempDir()
	const n = 16
	helpers := make([]*testutil.Proc, n)
	for i := range n {
		helpers[i] = startHelper(t, "race", "RESERVE_HOME="+home, "RESERVE_KEY=race-key",
			fmt.Sprintf("RESERVE_RUN=01run%026d", i), fmt.Sprintf("RESERVE_PID=%d", i+1))
	}
	for _, h := range helpers {
		if have := h.Line(t, helperWait); have != "ready" {
			t.Fatalf("want ready, have %q", have)
		}
	}
	for _, h := range helpers { // release the barrier
		h.Stdin.Close()
	}
	var winners, observed []string
	for i, h := range helpers {
		verdict, id, _ := strings.Cut(h.Line(t, helperWait), " ")
		switch verdict {
		case "reserved":
			winners = append(winners, id)
		case "already":
		default:
			t.Fatalf("helper %d: want reserved or already, have %q %q", i, verdict, id)
		}
		observed = append(observed, id)
		if err := h.Wait(t, helperWait); err != nil {
			t.Fatalf("helper %d: %v", i, err)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("want exactly one winner, have %d: %v", len(winners), winners)
	}
	for _, id := range observed {
		if id != winners[0] {
			t.Fatalf("every caller must resolve to the winner %s; have %v", winners[0], observed)
		}
	}
	if have := lookupRunID(t, NewStore(home), Key{Key: "race-key"}); have != winners[0] {
		t.Fatalf("lookup: want %s, have %s", winners[0], have)
	}
}

// Seed: release_frees_the_key.
func TestReleaseFreesTheKey(t *testing.T) {
	s, ctx := newTestStore(t)
	k := Key{Key: "release-key"}
	a, b, c := "01runaaaaaaaaaaaaaaaaaaaaaaaaa", "01runbbbbbbbbbbbbbbbbbbbbbbbbb", "01runccccccccccccccccccccccccc"

	if out, _, err := s.Release(ctx, k, a); err != nil || out != Absent {
		t.Fatalf("release of a free key: want absent, have %v, %v", out, err)
	}
	if existing := mustReserve(t, s, k, testRecord(a, 1)); existing != nil {
		t.Fatalf("want reserved, have already reserved by %s", existing.RunID)
	}
	if existing := mustReserve(t, s, k, testRecord(b, 2)); existing == nil || existing.RunID != a {
		t.Fatalf("second reserve: want already reserved by %s, have %v", a, existing)
	}
	if out, _, err := s.Release(ctx, k, a); err != nil || out != Released {
		t.Fatalf("owner release: want released, have %v, %v", out, err)
	}
	if existing := mustReserve(t, s, k, testRecord(c, 3)); existing != nil {
		t.Fatalf("after release: want reserved, have already reserved by %s", existing.RunID)
	}
}

// Seed: reclaim_compare_and_replaces_only_the_observed_owner.
func TestReclaimCompareAndReplacesOnlyTheObservedOwner(t *testing.T) {
	s, ctx := newTestStore(t)
	k := Key{Key: "reclaim-key"}
	stale := testRecord("01runaaaaaaaaaaaaaaaaaaaaaaaaa", 1)
	replacement := testRecord("01runbbbbbbbbbbbbbbbbbbbbbbbbb", 2)
	if existing := mustReserve(t, s, k, stale); existing != nil {
		t.Fatal("want reserved")
	}
	unpublished := filepath.Join(s.Layout().Home, "unpublished-manifest")
	out, _, err := s.Reclaim(ctx, k, stale, replacement, unpublished)
	if err != nil || out != Reclaimed {
		t.Fatalf("want reclaimed, have %v, %v", out, err)
	}
	if rec, err := s.Lookup(ctx, k); err != nil || !rec.Equal(replacement) {
		t.Fatalf("want the replacement, have %+v, %v", rec, err)
	}
	third := testRecord("01runccccccccccccccccccccccccc", 3)
	out, cur, err := s.Reclaim(ctx, k, stale, third, unpublished)
	if err != nil || out != Changed || !cur.Equal(replacement) {
		t.Fatalf("want changed to the replacement, have %v %+v, %v", out, cur, err)
	}
	if have := lookupRunID(t, s, k); have != replacement.RunID {
		t.Fatalf("want %s kept, have %s", replacement.RunID, have)
	}
}

// Seed: release_is_ownership_checked.
func TestReleaseIsOwnershipChecked(t *testing.T) {
	s, ctx := newTestStore(t)
	k := Key{Key: "cas-key"}
	owner, stale := "01runaaaaaaaaaaaaaaaaaaaaaaaaa", "01runbbbbbbbbbbbbbbbbbbbbbbbbb"
	if existing := mustReserve(t, s, k, testRecord(owner, 1)); existing != nil {
		t.Fatal("want reserved")
	}
	out, cur, err := s.Release(ctx, k, stale)
	if err != nil || out != NotOwner || cur.RunID != owner {
		t.Fatalf("want not_owner naming %s, have %v %+v, %v", owner, out, cur, err)
	}
	if have := lookupRunID(t, s, k); have != owner {
		t.Fatalf("want %s, have %s", owner, have)
	}
	if existing := mustReserve(t, s, k, testRecord(stale, 2)); existing == nil {
		t.Fatal("want already reserved")
	}
}

// Seed 0.1.7: plain run-id records are read as legacy records (trimmed,
// schema 0, no creator), lose a reserve race, and release only for their
// own run id.
func TestLegacyRecord(t *testing.T) {
	s, ctx := newTestStore(t)
	k := Key{Repo: "repo", Branch: "main", Key: "legacy-key"}
	owner := "01runaaaaaaaaaaaaaaaaaaaaaaaaa"
	p := s.RecordPath(k)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(" "+owner+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := s.Lookup(ctx, k)
	if err != nil || rec == nil || rec.RunID != owner || !rec.Legacy() || rec.Creator != nil {
		t.Fatalf("want legacy %s, have %+v, %v", owner, rec, err)
	}
	if existing := mustReserve(t, s, k, testRecord("01runbbbbbbbbbbbbbbbbbbbbbbbbb", 2)); existing == nil || existing.RunID != owner {
		t.Fatalf("reserve over a legacy record: want already reserved by %s, have %+v", owner, existing)
	}
	if out, _, err := s.Release(ctx, k, "01runbbbbbbbbbbbbbbbbbbbbbbbbb"); err != nil || out != NotOwner {
		t.Fatalf("foreign release: want not_owner, have %v, %v", out, err)
	}
	if out, _, err := s.Release(ctx, k, owner); err != nil || out != Released {
		t.Fatalf("owner release: want released, have %v, %v", out, err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("want the legacy record removed, have %v", err)
	}
}

func TestReclaimPublishedBeatsEverything(t *testing.T) {
	s, ctx := newTestStore(t)
	k := Key{Key: "pub"}
	old := testRecord("01runaaaaaaaaaaaaaaaaaaaaaaaaa", 1)
	mustReserve(t, s, k, old)
	manifest := s.Layout().ManifestPath(old.RunID)
	os.MkdirAll(filepath.Dir(manifest), 0o755)
	os.WriteFile(manifest, []byte(`{}`), 0o644)
	before, _ := os.ReadFile(s.RecordPath(k))
	out, _, err := s.Reclaim(ctx, k, old, testRecord("01runbbbbbbbbbbbbbbbbbbbbbbbbb", 2), manifest)
	if err != nil || out != Published {
		t.Fatalf("want published, have %v, %v", out, err)
	}
	if after, _ := os.ReadFile(s.RecordPath(k)); string(after) != string(before) {
		t.Fatalf("record changed: want %s, have %s", before, after)
	}
}

func TestReclaimOfAbsentRecordCreates(t *testing.T) {
	s, ctx := newTestStore(t)
	k := Key{Key: "gone"}
	repl := testRecord("01runbbbbbbbbbbbbbbbbbbbbbbbbb", 2)
	out, _, err := s.Reclaim(ctx, k, testRecord("01runaaaaaaaaaaaaaaaaaaaaaaaaa", 1), repl, filepath.Join(s.Layout().Home, "nope"))
	if err != nil || out != Reclaimed {
		t.Fatalf("want reclaimed, have %v, %v", out, err)
	}
	if have := lookupRunID(t, s, k); have != repl.RunID {
		t.Fatalf("want %s, have %s", repl.RunID, have)
	}
}

func TestFinishStaleCleanup(t *testing.T) {
	s, ctx := newTestStore(t)
	k := Key{Key: "stale"}
	rec := testRecord("01runbbbbbbbbbbbbbbbbbbbbbbbbb", 2)
	rec.StaleRunIDs = []string{"01runaaaaaaaaaaaaaaaaaaaaaaaaa"}
	mustReserve(t, s, k, rec)
	if err := s.FinishStaleCleanup(ctx, k, "01runcccccccccccccccccccccccccc"); !errorsIs(err, ErrOwnerChanged) {
		t.Fatalf("foreign cleanup: want ErrOwnerChanged, have %v", err)
	}
	if err := s.FinishStaleCleanup(ctx, k, rec.RunID); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Lookup(ctx, k)
	want := *rec
	want.StaleRunIDs = []string{}
	if !got.Equal(&want) {
		t.Fatalf("want %+v, have %+v", want, got)
	}
	if err := s.FinishStaleCleanup(ctx, Key{Key: "absent"}, rec.RunID); err != nil {
		t.Fatalf("absent record: want nil, have %v", err)
	}
}

// Records and locks leasewrap will not touch: each is refused by every
// operation and left byte for byte as it was.
func TestRefusedRecordsAreNeverTouched(t *testing.T) {
	cases := []struct {
		name    string
		content string
		symlink string // "record" or "lock": plant a symlink there instead
		want    error
	}{
		{name: "schema 2", content: `{"schema_version":2,"run_id":"01runaaaaaaaaaaaaaaaaaaaaaaaaa","creator":null,"stale_run_ids":[]}`, want: ErrUnsupportedSchema},
		{name: "corrupt json", content: `{"schema_version":1,"run_id":`, want: ErrCorrupt},
		{name: "wrong type", content: `{"schema_version":"1","run_id":"x"}`, want: ErrCorrupt},
		{name: "over the size bound", content: `{"schema_version":1,"run_id":"01runaaaaaaaaaaaaaaaaaaaaaaaaa","creator":null,"stale_run_ids":[]}` +
			strings.Repeat(" ", MaxRecordBytes), want: ErrCorrupt},
		{name: "symlinked record", symlink: "record", want: ErrUnsafePath},
		{name: "symlinked lock", symlink: "lock", want: ErrUnsafePath},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, ctx := newTestStore(t)
			k := Key{Key: "refuse"}
			dir := s.Layout().IdempotencyDir()
			os.MkdirAll(dir, 0o755)
			target := filepath.Join(t.TempDir(), "target")
			os.WriteFile(target, []byte("01runaaaaaaaaaaaaaaaaaaaaaaaaa"), 0o644)
			watched := s.RecordPath(k)
			switch tc.symlink {
			case "record":
				os.Symlink(target, watched)
				watched = target
			case "lock":
				os.Symlink(target, s.LockPath(k))
				watched = target
			default:
				os.WriteFile(watched, []byte(tc.content), 0o644)
			}
			before, _ := os.ReadFile(watched)
			ops := map[string]func() error{
				"lookup":  func() error { _, err := s.Lookup(ctx, k); return err },
				"reserve": func() error { _, err := s.Reserve(ctx, k, testRecord("01runbbbbbbbbbbbbbbbbbbbbbbbbb", 2)); return err },
				"release": func() error { _, _, err := s.Release(ctx, k, "01runaaaaaaaaaaaaaaaaaaaaaaaaa"); return err },
				"reclaim": func() error {
					_, _, err := s.Reclaim(ctx, k, testRecord("01runaaaaaaaaaaaaaaaaaaaaaaaaa", 1), testRecord("01runbbbbbbbbbbbbbbbbbbbbbbbbb", 2), filepath.Join(dir, "none"))
					return err
				},
				"finish cleanup": func() error { return s.FinishStaleCleanup(ctx, k, "01runaaaaaaaaaaaaaaaaaaaaaaaaa") },
			}
			for name, op := range ops {
				err := op()
				if !errorsIs(err, tc.want) || !errorsIs(err, lease.ErrRefused) {
					t.Errorf("%s: want %v (refused), have %v", name, tc.want, err)
				}
				if err != nil && !strings.Contains(err.Error(), dir) {
					t.Errorf("%s: error does not name the path: %v", name, err)
				}
				if after, _ := os.ReadFile(watched); string(after) != string(before) {
					t.Errorf("%s: content changed: want %q, have %q", name, before, after)
				}
			}
			if fi, err := os.Lstat(s.RecordPath(k)); tc.symlink == "record" && (err != nil || fi.Mode()&os.ModeSymlink == 0) {
				t.Errorf("symlink replaced: %v %v", fi, err)
			}
		})
	}
}

func TestKeyLockWaitHasADeadline(t *testing.T) {
	s, ctx := newTestStore(t)
	s.lockTimeout = 50 * time.Millisecond
	k := Key{Key: "busy"}
	os.MkdirAll(s.Layout().IdempotencyDir(), 0o755)
	// Hold the key lock on a separate open file description.
	err := withKeyLock(ctx, s.LockPath(k), time.Second, func() error {
		_, err := s.Lookup(ctx, k)
		return err
	})
	if !errorsIs(err, ErrLockTimeout) {
		t.Fatalf("want ErrLockTimeout, have %v", err)
	}
}
