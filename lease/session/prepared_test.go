package session

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/lease/leasetest"
)

// TestPreparedRecordPublishesTheSeedsRecord: a waiter's Wake prepares the
// record file while the session is owned; the attempt after the release
// publishes exactly the record the seed would (decodable, schema 3, our
// token, live under our shared lock), with no temp name ever in the
// directory, and the provisional content is gone.
func TestPreparedRecordPublishesTheSeedsRecord(t *testing.T) {
	root, sid := t.TempDir(), NewID()
	s := NewStore(root)
	other := mustAcquire(t, s, sid, testContext("holder", 6))
	l, err := NewLocker(lockerConfig(root, sid, "waiter", 6))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := l.Acquire(ctx); err == nil {
		t.Fatal("want the owned session refused")
	}
	leasetest.Waited(t, l)
	if l.prep == nil || l.prep.f == nil {
		t.Fatal("want a prepared record file after a wait")
	}
	if have := testutil.DirNames(t, s.OwnerDir(sid)); len(have) != 1 {
		t.Fatalf("want only the holder's record in the directory (the prepared file has no name), have %v", have)
	}
	l.store.now = func() time.Time { return time.Now().Add(time.Hour) } // a real record differs from the provisional one
	if err := other.Release(); err != nil {
		t.Fatal(err)
	}
	ls, err := l.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Finish(ctx, lease.Result{})
	if l.prep != nil {
		t.Error("want the prepared file used up")
	}
	ol := ls.(*ownerLease)
	o := ol.Owner()
	data, err := os.ReadFile(ol.Path())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := EncodeOwner(&o)
	if string(data) != string(want) {
		t.Errorf("want the published record byte for byte\n%s\nhave\n%s", want, data)
	}
	if got := classifyLiveness(ol.Path(), &o); got != Live {
		t.Errorf("want our record live, have %v", got)
	}
	for _, n := range testutil.DirNames(t, s.OwnerDir(sid)) {
		if strings.Contains(n, ".tmp-") {
			t.Errorf("want no temp name, have %s", n)
		}
	}
	if err := ls.Finish(ctx, lease.Result{}); err != nil {
		t.Fatal(err)
	}
	if have := testutil.DirNames(t, s.OwnerDir(sid)); len(have) != 0 {
		t.Errorf("want the record removed by Finish, have %v", have)
	}
}

// TestPreparedRecordCrashLeavesNothing: a waiter SIGKILLed at the publish
// point of a prepared record (written, fsynced, locked, not linked)
// leaves neither an owner nor a temp file: the unnamed file dies with
// it, where the seed's path leaves its temp behind.
func TestPreparedRecordCrashLeavesNothing(t *testing.T) {
	root, sid := t.TempDir(), NewID()
	cmd := helperCmd(t, "prepared-pre-publish", root, sid, helperCrashEnv+"="+crashPrePublish)
	wantKilled(t, cmd)
	s := NewStore(root)
	if have := testutil.DirNames(t, s.OwnerDir(sid)); len(have) != 0 {
		t.Errorf("want nothing left in the owner directory, have %v", have)
	}
	if owners, err := s.ActiveOwners(sid); err != nil || len(owners) != 0 {
		t.Fatalf("want no owner exposed, have %d (%v)", len(owners), err)
	}
	mustAcquire(t, s, sid, testContext("next", 5))
}

// TestReleaseLeavesARewrittenRecord: Release compares the bytes it wrote
// through its own descriptor; a record rewritten in place with another
// token (same file) is left alone, as the seed's read-and-compare does.
func TestReleaseLeavesARewrittenRecord(t *testing.T) {
	root, sid := t.TempDir(), NewID()
	g := mustAcquire(t, NewStore(root), sid, testContext("a", 6))
	o := g.Owner()
	o.LeaseToken = "someone-else"
	data, _ := EncodeOwner(&o)
	f, err := os.OpenFile(g.Path(), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(data)
	f.Close()
	if err := g.Release(); err != nil {
		t.Fatal(err)
	}
	if have, _ := os.ReadFile(g.Path()); string(have) != string(data) {
		t.Errorf("want the rewritten record left in place, have %q", have)
	}
}
