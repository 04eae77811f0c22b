package reserve

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/seedharness"
	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/lease"
)

// TestSeedReservationInterop runs the reservation seed's own code
// (orchestratectl 0.4.0's idempotency.rs, seed 000) against this package on
// one home, in both directions: the records each side writes are read by the
// other byte for byte (both are serde_json::to_vec of the same struct), each
// side refuses a key whose creator is live, and reclaims one whose creator's
// materializer lease is dead; a published run beats the seed's reclaim, and
// a published run the seed reserved is replayed by the Locker. It is "seed
// code plus shims": fs4 (absent from Debian) is a shim over std's
// File::lock, the same flock(2); octl_core's RunLock and nofollow, the
// CliError type and the home lookup live outside the seed and are
// stand-ins (testdata/reservecheck/README.md).
//
// The harness is $LEASEWRAP_RESERVERS, else the one `make harnesses`
// builds; without it the test skips, and fails under CI.
func TestSeedReservationInterop(t *testing.T) {
	bin := seedharness.Bin(t, "LEASEWRAP_RESERVERS", "reservecheck", "reservers")
	ctx := t.Context()
	k := Key{Repo: "repo", Branch: "main", Key: "deploy ✓ \"1\""}
	args := func(verb string, more ...string) []string {
		return append([]string{verb, k.Repo, k.Branch, k.Key}, more...)
	}

	t.Run("seed reservation read by Go, its live creator respected, reclaimed when dead", func(t *testing.T) {
		home := t.TempDir()
		s := NewStore(home)
		seedRun := newInteropRunID(t)
		hold := startReserveSeed(t, bin, home, args("reserve", seedRun, "hold")...)
		line := hold.Line(t, seedharness.Within)
		seedJSON, ok := strings.CutPrefix(line, "reserved ")
		if !ok {
			t.Fatalf("want the seed to reserve, have %q", line)
		}
		if raw, err := os.ReadFile(s.RecordPath(k)); err != nil || string(raw) != seedJSON {
			t.Fatalf("want the seed's record at our path for the key (%s), have %q (%v)", s.RecordPath(k), raw, err)
		}
		rec, err := s.Lookup(ctx, k)
		if err != nil || rec == nil {
			t.Fatalf("want Go to read the seed's record, have %v (%v)", rec, err)
		}
		if string(rec.Marshal()) != seedJSON {
			t.Errorf("want our encoding of the seed's record byte-identical\nseed: %s\nours: %s", seedJSON, rec.Marshal())
		}
		if rec.RunID != seedRun || rec.Creator == nil || !rec.Creator.HasLeasePath() {
			t.Fatalf("want the seed's run and materializer lease, have %+v", rec)
		}
		if live := CreatorLiveness(rec); live != Live {
			t.Errorf("want the holding seed's creator live, have %s", live)
		}
		existing, err := s.Reserve(ctx, k, testInteropRecord(t, newInteropRunID(t), ""))
		if err != nil || !existing.Equal(rec) {
			t.Errorf("want Go's reserve to replay the seed's record, have %+v (%v)", existing, err)
		}
		l, err := NewLocker(LockerConfig{Key: k.Key, Repo: k.Repo, Branch: k.Branch, Home: home})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Acquire(ctx); !errors.Is(err, lease.ErrHeld) {
			t.Errorf("want the reservation Locker to see the seed's run in flight, have %v", err)
		}

		hold.Kill(t, seedharness.Within) // a crashed creator: its lease file stays, unlocked
		if live := CreatorLiveness(rec); live != Dead {
			t.Fatalf("want the killed seed's creator dead, have %s", live)
		}
		goRun := newInteropRunID(t)
		repl := testInteropRecord(t, goRun, "")
		repl.StaleRunIDs = []string{seedRun}
		out, cur, err := s.Reclaim(ctx, k, rec, repl, s.Layout().ManifestPath(seedRun))
		if err != nil || out != Reclaimed {
			t.Fatalf("want Go to reclaim the dead seed's reservation, have %s %+v (%v)", out, cur, err)
		}
		if got, _ := runReserveSeed(t, bin, home, args("lookup")...); got != string(repl.Marshal()) {
			t.Errorf("want the seed to read our replacement byte for byte\nseed: %s\nours: %s", got, repl.Marshal())
		}
		if res, _, err := s.Release(ctx, k, goRun); err != nil || res != Released {
			t.Fatalf("release: %s (%v)", res, err)
		}
		if got, _ := runReserveSeed(t, bin, home, args("lookup")...); got != "none" {
			t.Errorf("want the key free for the seed after our release, have %s", got)
		}
	})

	t.Run("Go reservation read by the seed, its live creator respected, reclaimed when dead", func(t *testing.T) {
		home := t.TempDir()
		s := NewStore(home)
		rec, ml := reserveGoRun(t, s, k)
		goRun := rec.RunID
		if got, _ := runReserveSeed(t, bin, home, args("lookup")...); got != string(rec.Marshal()) {
			t.Errorf("want the seed to read our record byte for byte\nseed: %s\nours: %s", got, rec.Marshal())
		}
		if got, _ := runReserveSeed(t, bin, home, "liveness", ml.Path()); got != "live" {
			t.Errorf("want the seed to see our materializer lease live, have %q", got)
		}
		got, code := runReserveSeed(t, bin, home, args("reserve", newInteropRunID(t))...)
		if code != 3 || got != "already "+string(rec.Marshal()) {
			t.Errorf("want the seed's reserve to replay our record, have exit %d: %s", code, got)
		}
		if got, code := runReserveSeed(t, bin, home, args("reclaim", newInteropRunID(t))...); code != 3 || got != "live" {
			t.Errorf("want the seed to refuse to reclaim our live run, have exit %d: %s", code, got)
		}

		ml.File().Close() // a crashed creator: the file stays, the flock is gone
		seedRun := newInteropRunID(t)
		got, code = runReserveSeed(t, bin, home, args("reclaim", seedRun)...)
		seedJSON, ok := strings.CutPrefix(got, "reclaimed ")
		if code != 0 || !ok {
			t.Fatalf("want the seed to reclaim our dead run, have exit %d: %s", code, got)
		}
		cur, err := s.Lookup(ctx, k)
		if err != nil || cur == nil || string(cur.Marshal()) != seedJSON {
			t.Fatalf("want the seed's replacement read byte for byte\nseed: %s\nours: %v (%v)", seedJSON, cur, err)
		}
		if cur.RunID != seedRun || len(cur.StaleRunIDs) != 1 || cur.StaleRunIDs[0] != goRun {
			t.Errorf("want the seed's run with ours as stale, have %+v", cur)
		}
	})

	t.Run("a published run beats the seed's reclaim; releases only by run id", func(t *testing.T) {
		home := t.TempDir()
		s := NewStore(home)
		rec, ml := reserveGoRun(t, s, k)
		goRun := rec.RunID
		now := time.Now()
		m := &Manifest{RunID: goRun, KeyHash: k.Hash(), Key: k.Key, Argv: []string{"true"}, StartedAt: now, FinishedAt: now, Host: "h", Writer: ManifestWriter}
		if err := Publish(s.Layout(), m); err != nil {
			t.Fatal(err)
		}
		ml.File().Close()
		if got, code := runReserveSeed(t, bin, home, args("reclaim", newInteropRunID(t))...); code != 0 || got != "published" {
			t.Errorf("want the seed to see our run published, have exit %d: %s", code, got)
		}
		runReserveSeed(t, bin, home, args("release", newInteropRunID(t))...)
		if rec, _ := s.Lookup(ctx, k); rec == nil || rec.RunID != goRun {
			t.Errorf("want the seed's release of another run id to leave ours, have %+v", rec)
		}
		runReserveSeed(t, bin, home, args("release", goRun)...)
		if rec, err := s.Lookup(ctx, k); rec != nil || err != nil {
			t.Errorf("want the seed's release of our run id to free the key, have %+v (%v)", rec, err)
		}

		// The seed reserves, its run is published and its creator gone:
		// leasewrap replays the run instead of running it again.
		seedRun := newInteropRunID(t)
		if got, code := runReserveSeed(t, bin, home, args("reserve", seedRun)...); code != 0 {
			t.Fatalf("seed reserve: exit %d: %s", code, got)
		}
		m.RunID, m.ExitCode = seedRun, 3
		if err := Publish(s.Layout(), m); err != nil {
			t.Fatal(err)
		}
		l, err := NewLocker(LockerConfig{Key: k.Key, Repo: k.Repo, Branch: k.Branch, Home: home})
		if err != nil {
			t.Fatal(err)
		}
		var replay *lease.ReplayError
		if _, err := l.Acquire(ctx); !errors.As(err, &replay) || replay.ExitCode != 3 {
			t.Errorf("want the Locker to replay the seed's published run (exit 3), have %v", err)
		}
	})
}

func newInteropRunID(t *testing.T) string {
	t.Helper()
	id, err := NewRunID(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// reserveGoRun reserves k for a new run of this process whose
// materializer lease it holds (closed at the test's cleanup).
func reserveGoRun(t *testing.T, s *Store, k Key) (*Record, *MaterializerLease) {
	t.Helper()
	runID := newInteropRunID(t)
	ml, err := AcquireMaterializerLease(s.Layout(), runID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ml.Close() })
	rec := testInteropRecord(t, runID, ml.Path())
	if existing, err := s.Reserve(t.Context(), k, rec); err != nil || existing != nil {
		t.Fatalf("reserve: %+v (%v)", existing, err)
	}
	return rec, ml
}

// testInteropRecord is a record created by this process, with its start
// time, naming leasePath ("" = none).
func testInteropRecord(t *testing.T, runID, leasePath string) *Record {
	t.Helper()
	start, err := ProcessStartSecs(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return NewRecord(runID, NewCreator(uint32(os.Getpid()), &start, time.Now(), leasePath))
}

func reserveSeedCmd(bin, home string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "ORCHESTRATECTL_HOME="+home)
	return cmd
}

// runReserveSeed runs one seed command to its end and returns its output
// and exit code.
func runReserveSeed(t *testing.T, bin, home string, args ...string) (string, int) {
	t.Helper()
	return seedharness.Run(t, reserveSeedCmd(bin, home, args...))
}

// startReserveSeed starts a seed command that holds what it took until
// stdin closes.
func startReserveSeed(t *testing.T, bin, home string, args ...string) *testutil.Proc {
	t.Helper()
	return seedharness.Start(t, reserveSeedCmd(bin, home, args...))
}
