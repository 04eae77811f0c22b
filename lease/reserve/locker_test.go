package reserve

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/lease"
)

func newTestLocker(t *testing.T, home string, mod func(*LockerConfig)) *Locker {
	t.Helper()
	cfg := LockerConfig{Key: "job", Repo: "repo", Branch: "main", Home: home, Host: "testhost"}
	if mod != nil {
		mod(&cfg)
	}
	l, err := NewLocker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func acquire(t *testing.T, l *Locker) *reservationLease {
	t.Helper()
	ls, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	return ls.(*reservationLease)
}

func readRecordFile(t *testing.T, path string) *Record {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ParseRecord(raw)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestLockerFreshAcquireWritesCreatorAndHoldsLease(t *testing.T) {
	home := t.TempDir()
	l := newTestLocker(t, home, nil)
	if l.Kind() != "reservation" || l.Key() != "job" {
		t.Fatalf("want kind reservation, key job; have %s %s", l.Kind(), l.Key())
	}
	rl := acquire(t, l)
	defer rl.ml.Close()
	rec := readRecordFile(t, l.store.RecordPath(l.key))
	self, _ := ProcessStartSecs(os.Getpid())
	switch {
	case rec.RunID != rl.RunID() || rl.Holder() != rec.RunID || len(rec.RunID) != 26:
		t.Fatalf("want record, holder and lease on one ULID, have %s %s %s", rec.RunID, rl.Holder(), rl.RunID())
	case rec.Creator.PID != uint32(os.Getpid()) || rec.Creator.PIDStartSecs == nil || *rec.Creator.PIDStartSecs != self:
		t.Fatalf("want creator pid %d start %d, have %+v", os.Getpid(), self, rec.Creator)
	case rec.Creator.MaterializerLeasePath != rl.File().Name() || rec.Creator.MaterializerLeasePath != l.store.Layout().MaterializerPath(rec.RunID):
		t.Fatalf("want the lease path in the record, have %s", rec.Creator.MaterializerLeasePath)
	case MaterializerLiveness(rec.Creator.MaterializerLeasePath) != Live:
		t.Fatal("want the creator live while the lease is held")
	case strings.Join(rl.Env(), " ") != "LEASEWRAP_RUN_ID="+rec.RunID || rl.TTL() != 0:
		t.Fatalf("want env LEASEWRAP_RUN_ID and TTL 0, have %v %v", rl.Env(), rl.TTL())
	}
	if err := rl.Renew(context.Background()); err != nil {
		t.Fatalf("renew: %v", err)
	}
	if _, err := l.Acquire(context.Background()); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("second acquire while held: want ErrHeld, have %v", err)
	}
	w, err := l.Notify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	lay := l.store.Layout()
	for _, dir := range []string{lay.IdempotencyDir(), lay.RunsDir(), lay.MaterializerDir()} {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Fatalf("watched dir %s: %v", dir, err)
		}
	}
}

func TestLockerFinish(t *testing.T) {
	cases := []struct {
		name            string
		publishFailures bool
		res             lease.Result
		wantPublished   bool
		wantRecord      bool
	}{
		{name: "success publishes", res: lease.Result{ExitCode: 0}, wantPublished: true, wantRecord: true},
		{name: "failure releases", res: lease.Result{ExitCode: 3}},
		{name: "failure published on request", publishFailures: true, res: lease.Result{ExitCode: 137, Signal: syscall.SIGKILL}, wantPublished: true, wantRecord: true},
		{name: "lost publishes nothing", res: lease.Result{ExitCode: 0, Lost: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			l := newTestLocker(t, home, func(c *LockerConfig) { c.PublishFailures = tc.publishFailures })
			rl := acquire(t, l)
			leasePath := rl.File().Name()
			tc.res.Argv = []string{"sh", "-c", "x"}
			tc.res.Started, tc.res.Finished = time.Now(), time.Now()
			if err := rl.Finish(context.Background(), tc.res); err != nil {
				t.Fatalf("finish: %v", err)
			}
			if _, err := os.Stat(leasePath); !os.IsNotExist(err) {
				t.Fatalf("want the lease file removed, have %v", err)
			}
			lay := l.store.Layout()
			published, _ := IsPublished(lay, rl.RunID())
			_, recErr := os.Stat(l.store.RecordPath(l.key))
			if published != tc.wantPublished || (recErr == nil) != tc.wantRecord {
				t.Fatalf("want published %v record %v, have %v %v", tc.wantPublished, tc.wantRecord, published, recErr)
			}
			_, err := newTestLocker(t, home, nil).Acquire(context.Background())
			if !tc.wantPublished {
				if err != nil {
					t.Fatalf("retry after release: want a fresh run, have %v", err)
				}
				return
			}
			var re *lease.ReplayError
			if !errors.As(err, &re) || re.ExitCode != tc.res.ExitCode || !strings.Contains(re.Summary, rl.RunID()) {
				t.Fatalf("retry: want replay of exit %d, have %v", tc.res.ExitCode, err)
			}
			var m Manifest
			data, _ := os.ReadFile(lay.ManifestPath(rl.RunID()))
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			if m.Writer != "leasewrap" || m.KeyHash != KeyHash("repo", "main", "job") || m.Host != "testhost" || len(m.Argv) != 3 ||
				(tc.res.Signal != 0) != (m.Signal != nil) {
				t.Fatalf("manifest: %s", data)
			}
			if _, err := os.Stat(lay.StagingDir(rl.RunID())); !os.IsNotExist(err) {
				t.Fatalf("want no staging dir left, have %v", err)
			}
		})
	}
}

func TestLockerRenewReportsLoss(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(path string)
		lost   bool
	}{
		{"still ours", func(string) {}, false},
		{"removed", func(p string) { os.Remove(p) }, true},
		{"replaced", func(p string) { os.WriteFile(p, testRecord("01other", 1).Marshal(), 0o644) }, true},
		{"corrupted", func(p string) { os.WriteFile(p, []byte("{garbage"), 0o644) }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newTestLocker(t, t.TempDir(), nil)
			rl := acquire(t, l)
			tc.mutate(l.store.RecordPath(l.key))
			err := rl.Renew(context.Background())
			if errors.Is(err, lease.ErrLost) != tc.lost || (!tc.lost && err != nil) {
				t.Fatalf("want lost=%v, have %v", tc.lost, err)
			}
			before, _ := os.ReadFile(l.store.RecordPath(l.key))
			if err := rl.Finish(context.Background(), lease.Result{Lost: tc.lost}); err != nil && !tc.lost {
				t.Fatal(err)
			}
			if tc.lost {
				if after, _ := os.ReadFile(l.store.RecordPath(l.key)); string(after) != string(before) {
					t.Fatalf("Finish touched a record that is not ours: %q -> %q", before, after)
				}
			}
		})
	}
}

// A live creator in another process is held; once it is SIGKILLed (and
// nothing inherited its lease) the next acquire proves it dead, reclaims
// the record and cleans the dead run's staging directory.
func TestLockerReclaimsAfterCreatorIsKilled(t *testing.T) {
	home := t.TempDir()
	h := startHelper(t, "hold", "RESERVE_HOME="+home, "RESERVE_KEY=job")
	f := strings.Fields(h.Line(t, helperWait))
	if len(f) != 3 || f[0] != "held" {
		t.Fatalf("helper: want held, have %v", f)
	}
	old := f[1]
	l := newTestLocker(t, home, func(c *LockerConfig) { c.Repo, c.Branch = "", "" })
	_, err := l.Acquire(context.Background())
	var he *lease.HeldError
	if !errors.As(err, &he) || he.Holder != old || he.PID != h.Pid() || !strings.Contains(he.Detail, "creator live") {
		t.Fatalf("want held by %s pid %d, have %v", old, h.Pid(), err)
	}
	staging := l.store.Layout().StagingDir(old)
	os.MkdirAll(filepath.Join(staging, "partial"), 0o755)

	h.Kill(t, helperWait)
	rl := acquire(t, l)
	defer rl.ml.Close()
	if rl.RunID() == old {
		t.Fatal("want a new run id")
	}
	rec := readRecordFile(t, l.store.RecordPath(l.key))
	if rec.RunID != rl.RunID() || len(rec.StaleRunIDs) != 0 {
		t.Fatalf("want our record with the stale cleanup finished, have %+v", rec)
	}
	if _, err := os.Stat(staging); !os.IsNotExist(err) {
		t.Fatalf("want the dead run's staging removed, have %v", err)
	}
}

// A grandchild that inherited the materializer lease keeps the creator
// live after the creator itself was SIGKILLed.
func TestLockerInheritedLeaseOutlivesCreator(t *testing.T) {
	home := t.TempDir()
	h := startHelper(t, "hold", "RESERVE_HOME="+home, "RESERVE_KEY=job", "RESERVE_GRANDCHILD=1")
	f := strings.Fields(h.Line(t, helperWait))
	if len(f) != 3 || f[0] != "held" {
		t.Fatalf("helper: want held, have %v", f)
	}
	gpid, _ := strconv.Atoi(f[2])
	grand, _ := os.FindProcess(gpid)
	defer grand.Kill()
	h.Kill(t, helperWait)
	l := newTestLocker(t, home, func(c *LockerConfig) { c.Repo, c.Branch = "", "" })
	if _, err := l.Acquire(context.Background()); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("creator dead but grandchild holds the lease: want ErrHeld, have %v", err)
	}
	grand.Kill()
	// The grandchild is not our child: wait until the kernel dropped its lock.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := l.Acquire(context.Background())
		if err == nil {
			break
		}
		if !errors.Is(err, lease.ErrHeld) || time.Now().After(deadline) {
			t.Fatalf("after the grandchild died: want the key reclaimed, have %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Records whose creator cannot be judged are refused with a message that
// says how to resolve them, and are never touched.
func TestLockerRefusesWhatItCannotDecide(t *testing.T) {
	leaseGone := NewRecord("01runaaaaaaaaaaaaaaaaaaaaaaaaa", NewCreator(1, u64(1), time.Now(), "/nonexistent/x.lease"))
	cases := []struct {
		name    string
		content string
		want    []string
	}{
		{"legacy unpublished", "01runaaaaaaaaaaaaaaaaaaaaaaaaa\n", []string{"legacy record", "leasewrap reserve release job --run-id 01runaaaaaaaaaaaaaaaaaaaaaaaaa"}},
		{"lease missing", string(leaseGone.Marshal()), []string{"cannot be verified", "/nonexistent/x.lease", "leasewrap reserve release"}},
		{"schema 2", `{"schema_version":2,"run_id":"r"}`, []string{"schema_version 2"}},
		{"corrupt", `{"schema_version":1`, []string{"corrupt"}},
		{"unsafe run id", `../../etc`, []string{"invalid run id"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newTestLocker(t, t.TempDir(), nil)
			p := l.store.RecordPath(l.key)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(tc.content), 0o644)
			_, err := l.Acquire(context.Background())
			if !errors.Is(err, lease.ErrRefused) {
				t.Fatalf("want ErrRefused, have %v", err)
			}
			for _, w := range append(tc.want, p) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q: %v", w, err)
				}
			}
			if after, _ := os.ReadFile(p); string(after) != tc.content {
				t.Fatalf("record changed: %q", after)
			}
			ents, _ := os.ReadDir(l.store.Layout().MaterializerDir())
			if len(ents) != 0 {
				t.Fatalf("want no materializer lease left, have %v", ents)
			}
		})
	}
}

func TestLockerReplaysPublishedRuns(t *testing.T) {
	cases := []struct {
		name     string
		record   string
		manifest string
		wantCode int
		wantErr  error
		want     string
	}{
		{name: "legacy published", record: "01runaaaaaaaaaaaaaaaaaaaaaaaaa", manifest: `{"exit_code":4}`, wantCode: 4, want: "exit code 4"},
		{name: "foreign manifest without exit code", record: "01runaaaaaaaaaaaaaaaaaaaaaaaaa", manifest: `{"run_id":"x"}`, wantCode: 0, want: "replaying 0"},
		{name: "corrupt manifest", record: "01runaaaaaaaaaaaaaaaaaaaaaaaaa", manifest: `{nope`, wantErr: lease.ErrRefused, want: "manifest.json"},
		{name: "published beats a live-looking creator", record: string(testRecord("01runaaaaaaaaaaaaaaaaaaaaaaaaa", 1).Marshal()), manifest: `{"exit_code":0}`, want: "exit code 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newTestLocker(t, t.TempDir(), nil)
			p := l.store.RecordPath(l.key)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(tc.record), 0o644)
			mp := l.store.Layout().ManifestPath("01runaaaaaaaaaaaaaaaaaaaaaaaaa")
			os.MkdirAll(filepath.Dir(mp), 0o755)
			os.WriteFile(mp, []byte(tc.manifest), 0o644)
			_, err := l.Acquire(context.Background())
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("want %v naming %s, have %v", tc.wantErr, tc.want, err)
				}
				return
			}
			var re *lease.ReplayError
			if !errors.As(err, &re) || re.ExitCode != tc.wantCode || !strings.Contains(re.Summary, tc.want) {
				t.Fatalf("want replay %d (%s), have %v", tc.wantCode, tc.want, err)
			}
		})
	}
}

func TestNewLockerValidates(t *testing.T) {
	if _, err := NewLocker(LockerConfig{Key: "k"}); !errors.Is(err, ErrNoHome) {
		t.Fatalf("no home: want ErrNoHome, have %v", err)
	}
	if _, err := NewLocker(LockerConfig{Key: "k", Home: "/h", RunID: "../x"}); !errors.Is(err, ErrInvalidRunID) {
		t.Fatalf("bad run id: want ErrInvalidRunID, have %v", err)
	}
	l, err := NewLocker(LockerConfig{Key: "k", Home: t.TempDir(), RunID: "01given"})
	if err != nil {
		t.Fatal(err)
	}
	rl := acquire(t, l)
	defer rl.ml.Close()
	if rl.RunID() != "01given" || rl.Holder() != "01given" {
		t.Fatalf("want the configured run id, have %s", rl.RunID())
	}
}

// Many leasewrap processes acquiring one fresh key: exactly one runs, the
// others see it held (never refused, never a second run).
func TestLockerAcquireIsExclusiveAcrossProcesses(t *testing.T) {
	home := t.TempDir()
	const n = 8
	helpers := make([]*testutil.Proc, n)
	for i := range n {
		helpers[i] = startHelper(t, "hold", "RESERVE_HOME="+home, "RESERVE_KEY=job")
	}
	held := 0
	for i, h := range helpers {
		line := h.Line(t, helperWait)
		switch {
		case strings.HasPrefix(line, "held "):
			held++
		case strings.HasPrefix(line, "error ") && strings.Contains(line, "is held by"):
		default:
			t.Fatalf("helper %d: want held or a held error, have %q", i, line)
		}
	}
	if held != 1 {
		t.Fatalf("want exactly one holder, have %d", held)
	}
}
