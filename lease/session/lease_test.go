package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The tests of this file are ports of the seed's mod tests (bcode_session
// lease.rs), one for one, named after the seed's tests.
func TestContendedLockWaitTimesOutInsteadOfBlockingForever(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "contended.lock")
	holder, err := openLockFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := flock(holder, lockEX); err != nil {
		t.Fatal(err)
	}
	waiter, err := openLockFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close()
	s := NewStore(dir) // the real 10 s budget, as in the seed
	started := time.Now()
	err = s.lockBounded(context.Background(), waiter, path, lockEX)
	var timeout *LockTimeoutError
	if !errors.As(err, &timeout) {
		t.Fatalf("want *LockTimeoutError, have %T: %v", err, err)
	}
	if elapsed := time.Since(started); elapsed < LockWaitBudget {
		t.Errorf("want a wait of at least %s, have %s", LockWaitBudget, elapsed)
	}
	if timeout.Path != path {
		t.Errorf("want the timeout to name %s, have %s", path, timeout.Path)
	}
}

func TestUncontendedBoundedLockWaitSucceeds(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "free.lock")
	f, err := openLockFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := NewStore(dir).lockBounded(context.Background(), f, path, lockEX); err != nil {
		t.Fatalf("want the uncontended lock, have %v", err)
	}
}

func TestDifferentWriterVersionsCanOwnDifferentSessions(t *testing.T) {
	s := NewStore(t.TempDir())
	older := mustAcquire(t, s, NewID(), testContext("older", 4))
	current := mustAcquire(t, s, NewID(), testContext("current", 5))
	if have := *older.Owner().StorageWriterEpoch; have != 4 {
		t.Errorf("want epoch 4, have %d", have)
	}
	if have := *current.Owner().StorageWriterEpoch; have != 5 {
		t.Errorf("want epoch 5, have %d", have)
	}
}

func TestSchemaV3OwnerUsesLockLivenessAndNormalDropRemovesRecord(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	g := mustAcquire(t, s, sid, testContext("v3", 5))
	o := g.Owner()
	if o.SchemaVersion != 3 {
		t.Fatalf("want schema 3, have %d", o.SchemaVersion)
	}
	if have := classifyLiveness(g.Path(), &o); have != Live {
		t.Fatalf("want live, have %v", have)
	}
	if owners, _ := s.ActiveOwners(sid); len(owners) != 1 {
		t.Fatalf("want 1 active owner, have %d", len(owners))
	}
	path := g.Path()
	if err := g.Release(); err != nil {
		t.Fatal(err)
	}
	if exists(path) {
		t.Errorf("want %s removed on release, it exists", path)
	}
	if owners, _ := s.ActiveOwners(sid); len(owners) != 0 {
		t.Errorf("want no active owner, have %d", len(owners))
	}
}

func TestStaleSchemaV3RecordIsPrunedWithoutPIDEvidence(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	o := testOwner(sid, testContext("stale-v3", 5)) // our own, live pid
	path := ownerPathOf(s, sid, &o)
	f, err := writeOwnerRecord(path, &o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := flock(f, lockUN); err != nil { // abandon the owner
		t.Fatal(err)
	}
	f.Close()
	if have := classifyLiveness(path, &o); have != Stale {
		t.Fatalf("want stale, have %v", have)
	}
	next := mustAcquire(t, s, sid, testContext("next", 5))
	if have := *next.Owner().DaemonInstanceID; have != "next" {
		t.Errorf("want instance next, have %s", have)
	}
	if exists(path) {
		t.Errorf("want the stale record pruned, %s exists", path)
	}
}

func TestSchemaV2OwnerPreservesConservativePIDFallback(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	o := testOwner(sid, testContext("v2", 5))
	o.SchemaVersion = 2
	o.PID = uint32(os.Getpid())
	path := placeOwner(t, s, sid, &o)
	if have := classifyLiveness(path, &o); have != Live {
		t.Fatalf("want live, have %v", have)
	}
	if owners, _ := s.ActiveOwners(sid); len(owners) != 1 {
		t.Errorf("want 1 active owner, have %d", len(owners))
	}
}

func TestAbandonedPrePublishOwnerTempFileDoesNotBlockAcquisition(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	abandoned := ownerDirFile(t, s, sid, "abandoned.json.tmp-pre-publish")
	if err := os.WriteFile(abandoned, []byte("partial metadata"), 0o666); err != nil {
		t.Fatal(err)
	}
	if owners, err := s.ActiveOwners(sid); err != nil || len(owners) != 0 {
		t.Fatalf("want no active owners, have %d (%v)", len(owners), err)
	}
	g := mustAcquire(t, s, sid, testContext("current", 5))
	if have := *g.Owner().DaemonInstanceID; have != "current" {
		t.Errorf("want instance current, have %s", have)
	}
	if !exists(abandoned) {
		t.Errorf("want temp debris %s left alone, it is gone", abandoned)
	}
}

func TestSchemaV2ReusedLivePIDRemainsConservativelyOwned(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	o := testOwner(sid, testContext("historical", 4))
	o.SchemaVersion = 2
	o.PID = uint32(os.Getpid())
	path := placeOwner(t, s, sid, &o)
	if have := classifyLiveness(path, &o); have != Live {
		t.Fatalf("want live, have %v", have)
	}
	_, err := s.Acquire(context.Background(), sid, testContext("current", 5))
	wantOwned(t, err)
	if !exists(path) {
		t.Errorf("want the ambiguous v2 owner kept, %s is gone", path)
	}
}

func TestVoluntaryReleaseAllowsNextDaemonOwner(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	first := mustAcquire(t, s, sid, testContext("first", 5))
	first.Release()
	next := mustAcquire(t, s, sid, testContext("next", 5))
	if have := *next.Owner().DaemonInstanceID; have != "next" {
		t.Errorf("want instance next, have %s", have)
	}
}

func TestReleaseStopAndKilledOwnerWorkflowsAllowNextOwner(t *testing.T) {
	s := NewStore(t.TempDir())

	releaseSID := NewID()
	mustAcquire(t, s, releaseSID, testContext("release-owner", 5)).Release()
	mustAcquire(t, s, releaseSID, testContext("after-release", 5))

	stopSID := NewID()
	stopped := []*OwnerGuard{
		mustAcquire(t, s, stopSID, sameDaemonContext("stop-client-one", "stopping-daemon", 5)),
		mustAcquire(t, s, stopSID, sameDaemonContext("stop-client-two", "stopping-daemon", 5)),
	}
	for _, g := range stopped {
		g.Release()
	}
	mustAcquire(t, s, stopSID, testContext("after-stop", 5))

	killedSID := NewID()
	deadPath := placeDeadOwner(t, s, killedSID, testContext("killed-daemon", 5), "killed-owner")
	mustAcquire(t, s, killedSID, testContext("after-kill", 5))
	if exists(deadPath) {
		t.Errorf("want the killed owner's record pruned, %s exists", deadPath)
	}
}

func TestAllowsReentrantRegistrationsFromOneDaemonInstance(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	first := mustAcquire(t, s, sid, sameDaemonContext("first", "daemon-1", 7))
	second := mustAcquire(t, s, sid, sameDaemonContext("second", "daemon-1", 7))
	for _, g := range []*OwnerGuard{first, second} {
		if have := *g.Owner().StorageWriterEpoch; have != 7 {
			t.Errorf("want epoch 7, have %d", have)
		}
	}
	if *first.Owner().BuildFingerprint == *second.Owner().BuildFingerprint {
		t.Errorf("want two registrations with different builds, have %s twice", *first.Owner().BuildFingerprint)
	}
}

func TestRejectsSecondDaemonAtSameWriterEpoch(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	mustAcquire(t, s, sid, testContext("daemon-one", 7))
	_, err := s.Acquire(context.Background(), sid, testContext("daemon-two", 7))
	owned := wantOwned(t, err)
	if have := *owned.Owner.DaemonInstanceID; have != "daemon-one" {
		t.Errorf("want owner daemon-one, have %s", have)
	}
	if have := *owned.Owner.StorageWriterEpoch; have != 7 {
		t.Errorf("want owner epoch 7, have %d", have)
	}
}

func TestRejectsLiveDifferentStorageWriterEpoch(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	mustAcquire(t, s, sid, testContext("old", 1))
	_, err := s.Acquire(context.Background(), sid, testContext("new", 2))
	wantOwned(t, err)
}

func TestRejectsMissingStorageWriterIdentity(t *testing.T) {
	s := NewStore(t.TempDir())
	oc := DefaultOwnerContext()
	oc.StorageWriterEpoch = nil
	_, err := s.Acquire(context.Background(), NewID(), oc)
	if !errors.Is(err, ErrMissingWriterEpoch) {
		t.Fatalf("want ErrMissingWriterEpoch, have %v", err)
	}
}

func TestPrunesDeadOwnerBeforeCompatibilityCheck(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	path := placeDeadOwner(t, s, sid, testContext("dead-incompatible", 1), "dead-owner")
	live := mustAcquire(t, s, sid, testContext("live-current", 2))
	if exists(path) {
		t.Errorf("want the dead owner's record removed, %s exists", path)
	}
	if have := *live.Owner().StorageWriterEpoch; have != 2 {
		t.Errorf("want epoch 2, have %d", have)
	}
}

func TestOwnerRecordOpenErrorIsUnverifiableAndFailsClosed(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	o := testOwner(sid, testContext("unreadable", 4))
	path := ownerPathOf(s, sid, &o)
	if err := os.MkdirAll(path, 0o777); err != nil { // a directory at the record's path
		t.Fatal(err)
	}
	if have := classifyLiveness(path, &o); have != Unverifiable {
		t.Fatalf("want unverifiable, have %v", have)
	}
	_, err := s.Acquire(context.Background(), sid, testContext("current", 5))
	var uv *UnverifiableError
	if !errors.As(err, &uv) {
		t.Fatalf("want *UnverifiableError, have %T: %v", err, err)
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		t.Errorf("want the directory at %s untouched, have %v", path, err)
	}
}

func TestUnknownOwnerSchemaIsUnverifiableAndFailsClosed(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	o := testOwner(sid, testContext("future", 5))
	o.SchemaVersion = 99
	path := placeOwner(t, s, sid, &o)
	if have := classifyLiveness(path, &o); have != Unverifiable {
		t.Fatalf("want unverifiable, have %v", have)
	}
	_, err := s.Acquire(context.Background(), sid, testContext("next", 5))
	wantOwned(t, err)
	if !exists(path) {
		t.Errorf("want the unknown-schema record kept, %s is gone", path)
	}
}

func TestMalformedOwnerMetadataFailsClosedDuringMutatingPrune(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	malformed := ownerDirFile(t, s, sid, "malformed.json")
	if err := os.WriteFile(malformed, []byte("not-json"), 0o666); err != nil {
		t.Fatal(err)
	}
	_, err := s.Acquire(context.Background(), sid, testContext("next", 7))
	var uv *UnverifiableError
	if !errors.As(err, &uv) || uv.Path != malformed {
		t.Fatalf("want *UnverifiableError naming %s, have %T: %v", malformed, err, err)
	}
	if !exists(malformed) {
		t.Errorf("want unverifiable metadata kept, %s is gone", malformed)
	}
}

func TestAllowsDifferentStorageWriterEpochAfterGuardDrop(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	mustAcquire(t, s, sid, testContext("old", 1)).Release()
	mustAcquire(t, s, sid, testContext("new", 2))
}
