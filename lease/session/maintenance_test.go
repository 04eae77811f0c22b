package session

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestMaintenanceActivityProbeIsNonMutatingAndTracksGuardLifetime(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	if active, err := s.MaintenanceIsActive(sid); err != nil || active {
		t.Fatalf("want idle, have active=%v err=%v", active, err)
	}
	m, err := s.AcquireMaintenance(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	if active, err := s.MaintenanceIsActive(sid); err != nil || !active {
		t.Fatalf("want active, have active=%v err=%v", active, err)
	}
	if owners, _ := s.ActiveOwners(sid); len(owners) != 0 {
		t.Errorf("want probing to publish no owner, have %d", len(owners))
	}
	m.Release()
	if active, err := s.MaintenanceIsActive(sid); err != nil || active {
		t.Fatalf("want idle after release, have active=%v err=%v", active, err)
	}
}

func TestOwnerErrorExposesActionableIdentityWithoutDatabaseAccess(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	oc := testContext("owner-build", 7)
	oc.DaemonNamespace = Some("owner-namespace")
	oc.Endpoint = Some("unix:///tmp/owner.sock")
	mustAcquire(t, s, sid, oc)

	_, err := s.AcquireMaintenance(context.Background(), sid)
	owned := wantOwned(t, err)
	if have := *owned.Owner.DaemonInstanceID; have != "owner-build" {
		t.Errorf("want instance owner-build, have %s", have)
	}
	if have := *owned.Owner.StorageWriterEpoch; have != 7 {
		t.Errorf("want epoch 7, have %d", have)
	}
	if have := *owned.Owner.Endpoint; have != "unix:///tmp/owner.sock" {
		t.Errorf("want endpoint unix:///tmp/owner.sock, have %s", have)
	}
	for _, want := range []string{
		"daemon instance owner-build",
		"storage writer epoch 7",
		"namespace owner-namespace",
		"endpoint unix:///tmp/owner.sock",
	} {
		if !strings.Contains(owned.Summary, want) {
			t.Errorf("want the summary to contain %q, have %q", want, owned.Summary)
		}
	}
}

func TestMaintenanceRefusesAnyLiveSessionOwner(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	mustAcquire(t, s, sid, testContext("owner", 7))
	_, err := s.AcquireMaintenance(context.Background(), sid)
	wantOwned(t, err)
}

func TestFailedMaintenanceToLeaseTransitionReleasesCoordinator(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	m, err := s.AcquireMaintenance(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	oc := DefaultOwnerContext()
	oc.StorageWriterEpoch = nil
	if _, err := m.TransitionToLease(oc); !errors.Is(err, ErrMissingWriterEpoch) {
		t.Fatalf("want ErrMissingWriterEpoch, have %v", err)
	}
	// A short budget: a coordinator still held would time out, not hang.
	s2 := NewStore(s.Root())
	s2.lockBudget = 500 * time.Millisecond
	next, err := s2.AcquireMaintenance(context.Background(), sid)
	if err != nil {
		t.Fatalf("want the failed transition to release the coordinator, have %v", err)
	}
	next.Release()
	if owners, _ := s.ActiveOwners(sid); len(owners) != 0 {
		t.Errorf("want no owner registered, have %d", len(owners))
	}
}

func TestMaintenanceToLeaseTransitionPreventsIncompatibleHandoffRace(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	m, err := s.AcquireMaintenance(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.TransitionToLease(testContext("current", 7))
	if err != nil {
		t.Fatal(err)
	}
	if have := *g.Owner().StorageWriterEpoch; have != 7 {
		t.Errorf("want epoch 7, have %d", have)
	}
	_, err = s.Acquire(context.Background(), sid, testContext("incompatible", 8))
	wantOwned(t, err)
	g.Release()
	mustAcquire(t, s, sid, testContext("next", 8))
}

func TestMaintenanceCoordinatorBlocksNewSessionLeaseUntilRelease(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	m, err := s.AcquireMaintenance(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	finished := make(chan error, 1)
	go func() {
		close(started)
		g, err := s.Acquire(context.Background(), sid, testContext("writer", 7))
		if err == nil {
			g.Release()
		}
		finished <- err
	}()
	<-started
	select {
	case err := <-finished:
		t.Fatalf("want the acquisition blocked while maintenance holds the coordinator, it finished: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	m.Release()
	select {
	case err := <-finished:
		if err != nil {
			t.Fatalf("want the acquisition to succeed after release, have %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("want the acquisition to finish after maintenance release, it did not")
	}
}
