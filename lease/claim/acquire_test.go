package claim

import (
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFreshAcquireWritesLockfileAndEmits(t *testing.T) {
	c, root := newTestClaims(t)
	rec := mustAcquire(t, c, "session:fresh", "pty:me", AcquireOptions{Reason: "testing"})
	if rec.PID != os.Getpid() {
		t.Errorf("want pid %d, have %d", os.Getpid(), rec.PID)
	}
	if _, err := os.Stat(lockfile(t, root, "session:fresh")); err != nil {
		t.Fatal(err)
	}
	events := readEvents(t, root)
	if len(events) != 1 {
		t.Fatalf("want 1 event, have %d", len(events))
	}
	ev := events[0]
	data := ev["data"].(map[string]any)
	for k, want := range map[string]any{"type": "claim_acquired", "source": "fno-loop"} {
		if ev[k] != want {
			t.Errorf("%s: want %v, have %v", k, want, ev[k])
		}
	}
	if data["holder"] != "pty:me" || data["reason"] != "testing" {
		t.Errorf("want holder pty:me reason testing, have %v", data)
	}
	if v, ok := data["expires_at"]; !ok || v != nil {
		t.Errorf("want expires_at null, have %v (present %v)", v, ok)
	}
}

func TestSameHolderReacquireIsIdempotentAndRefreshes(t *testing.T) {
	c, root := newTestClaims(t)
	first := mustAcquire(t, c, "session:idem", "pty:me", AcquireOptions{})
	second := mustAcquire(t, c, "session:idem", "pty:me", AcquireOptions{PID: 4242})
	if second.PID != 4242 {
		t.Errorf("want pid 4242, have %d", second.PID)
	}
	if second.AcquiredAt < first.AcquiredAt {
		t.Errorf("want acquired_at refreshed, have %d < %d", second.AcquiredAt, first.AcquiredAt)
	}
	events := readEvents(t, root)
	if len(events) != 2 || events[1]["type"] != "claim_idempotent_reacquired" {
		t.Fatalf("want a claim_idempotent_reacquired event, have %v", events)
	}
	if have := events[1]["data"].(map[string]any)["previous_acquired_at"]; have != float64(first.AcquiredAt) {
		t.Errorf("want previous_acquired_at %d, have %v", first.AcquiredAt, have)
	}
}

func TestLiveOtherHolderIsRefusedWithIdentity(t *testing.T) {
	c, _ := newTestClaims(t)
	mustAcquire(t, c, "session:held", "pty:owner", AcquireOptions{})
	_, err := c.Acquire(t.Context(), "session:held", "pty:intruder", AcquireOptions{})
	var held *HeldByOtherError
	if !errors.As(err, &held) {
		t.Fatalf("want *HeldByOtherError, have %v", err)
	}
	if held.Holder != "pty:owner" || held.PID != os.Getpid() {
		t.Errorf("want pty:owner pid %d, have %s pid %d", os.Getpid(), held.Holder, held.PID)
	}
}

func TestStaleClaimIsReclaimedArchivedAndAudited(t *testing.T) {
	c, root := newTestClaims(t)
	// acquired_at before this process started: PID reuse, so stale.
	path := lockfile(t, root, "session:x")
	writeRecord(t, path, record(os.Getpid(), 1, nil, systemHostname()))
	rec := mustAcquire(t, c, "session:x", "pty:new", AcquireOptions{PID: os.Getpid()})
	if rec.Holder != "pty:new" {
		t.Errorf("want pty:new, have %s", rec.Holder)
	}
	entries, err := os.ReadDir(filepath.Join(filepath.Dir(path), expiredSubdir))
	if err != nil || len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "session%3Ax.") {
		t.Fatalf("want one archived session%%3Ax.<ms>.lock, have %v (%v)", entries, err)
	}
	events := readEvents(t, root)
	last := events[len(events)-1]
	if last["type"] != "claim_stale_reclaimed" || last["data"].(map[string]any)["previous_holder"] != "h" {
		t.Errorf("want claim_stale_reclaimed from h, have %v", last)
	}
}

func TestCorruptedFileStatusReportsAcquireRefusesReleaseLeaves(t *testing.T) {
	c, root := newTestClaims(t)
	path := lockfile(t, root, "session:bad")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte("{{{{not yaml"), 0o644)

	if st := c.Status("session:bad"); st.State != Corrupted || st.Record != nil || st.Err == nil {
		t.Errorf("want corrupted with no record, have %+v", st)
	}
	_, err := c.Acquire(t.Context(), "session:bad", "pty:x", AcquireOptions{})
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Path != path {
		t.Errorf("want *CorruptError naming %s, have %v", path, err)
	}
	if err := c.Release(t.Context(), "session:bad", "pty:x"); err != nil {
		t.Errorf("want silent success, have %v", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "{{{{not yaml" {
		t.Errorf("corrupted file must be left untouched, have %q (%v)", b, err)
	}
}

func TestReleaseSemanticsMissingOtherHolderAndOwned(t *testing.T) {
	c, root := newTestClaims(t)
	if err := c.Release(t.Context(), "session:gone", "pty:x"); err != nil {
		t.Errorf("missing file: want nil, have %v", err)
	}
	mustAcquire(t, c, "session:r", "pty:owner", AcquireOptions{})
	if err := c.Release(t.Context(), "session:r", "pty:other"); err != nil {
		t.Errorf("other holder: want nil, have %v", err)
	}
	if _, err := os.Stat(lockfile(t, root, "session:r")); err != nil {
		t.Fatalf("other holder's release must keep the file: %v", err)
	}
	if err := c.Release(t.Context(), "session:r", "pty:owner"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lockfile(t, root, "session:r")); !os.IsNotExist(err) {
		t.Errorf("want file removed, have %v", err)
	}
	events := readEvents(t, root)
	last := events[len(events)-1]
	if last["type"] != "claim_released" {
		t.Fatalf("want claim_released, have %v", last["type"])
	}
	if d, ok := last["data"].(map[string]any)["duration_held_ms"].(float64); !ok || d < 0 {
		t.Errorf("want duration_held_ms >= 0, have %v", last["data"])
	}
}

func TestStatusReadsFreeLiveAndFullRecord(t *testing.T) {
	c, _ := newTestClaims(t)
	if st := c.Status("session:s"); st.State != Free || st.Record != nil {
		t.Errorf("want free, have %+v", st)
	}
	meta := Metadata{{Key: "k", Value: "v"}, {Key: "n", Value: big.NewInt(3)}}
	mustAcquire(t, c, "session:s", "pty:me", AcquireOptions{Metadata: meta})
	st := c.Status("session:s")
	if st.State != Live || st.Record == nil || st.Record.Holder != "pty:me" {
		t.Fatalf("want live pty:me, have %+v", st)
	}
	if have, _ := st.Record.Metadata.MarshalJSON(); string(have) != `{"k":"v","n":3}` {
		t.Errorf(`want metadata {"k":"v","n":3}, have %s`, have)
	}
}
