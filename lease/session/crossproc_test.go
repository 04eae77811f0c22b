package session

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// wantKilled runs cmd and fails unless it died of SIGKILL (a crash point).
func wantKilled(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("want the helper killed at its crash point, have %v\n%s", err, out)
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("want death by SIGKILL at the crash point, have %v\n%s", err, out)
	}
}

func TestTwoCurrentDaemonsRacingForOneSessionYieldOneOwner(t *testing.T) {
	root := t.TempDir()
	sid := NewID()
	start := filepath.Join(root, "go")
	release := filepath.Join(root, "release")
	var results []string
	var cmds []*testutil.Proc
	for _, daemon := range []string{"daemon-one", "daemon-two"} {
		result := filepath.Join(root, daemon+".result")
		results = append(results, result)
		cmd := helperCmd(t, "race", root, sid,
			helperBuildEnv+"="+daemon,
			helperGoEnv+"="+start,
			helperAcquiredEnv+"="+result,
			helperReleaseEnv+"="+release,
		)
		cmds = append(cmds, startHelper(t, cmd))
	}
	if err := writeFileAtomic(start, nil); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, r := range results {
		testutil.WaitFor(t, "a race result in "+r, 15*time.Second, func() bool { return exists(r) })
		data, _ := os.ReadFile(r)
		counts[string(data)]++
	}
	if counts["ok"] != 1 || counts["owned"] != 1 {
		t.Errorf("want one ok and one owned, have %v", counts)
	}
	if err := writeFileAtomic(release, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds {
		c.WaitOK(t, helperWait)
	}
}

func TestPrePublishCrashDoesNotPublishOwner(t *testing.T) {
	root := t.TempDir()
	sid := NewID()
	cmd := helperCmd(t, "pre-publish", root, sid, helperCrashEnv+"="+crashPrePublish)
	wantKilled(t, cmd)
	s := NewStore(root)
	debris, _ := filepath.Glob(filepath.Join(s.OwnerDir(sid), "*.json.tmp-*"))
	if len(debris) != 1 {
		t.Errorf("want the crashed publisher's temp file left behind, have %v", debris)
	}
	if owners, err := s.ActiveOwners(sid); err != nil || len(owners) != 0 {
		t.Fatalf("want no owner exposed by a pre-publish crash, have %d (%v)", len(owners), err)
	}
	mustAcquire(t, s, sid, testContext("next", 5))
}

func TestLeaseHandoffProcessCrashLeavesRecoverableOwner(t *testing.T) {
	root := t.TempDir()
	sid := NewID()
	cmd := helperCmd(t, "handoff", root, sid, helperCrashEnv+"="+crashHandoff)
	wantKilled(t, cmd)
	s := NewStore(root)
	recs, err := s.Inspect(sid)
	if err != nil || len(recs) != 1 || recs[0].Liveness != Stale {
		t.Fatalf("want the crashed handoff's record published and stale, have %+v (%v)", recs, err)
	}
	if owners, err := s.ActiveOwners(sid); err != nil || len(owners) != 0 {
		t.Fatalf("want the dead handoff owner not active, have %d (%v)", len(owners), err)
	}
	retry := mustAcquire(t, s, sid, testContext("retry", 7))
	if have := *retry.Owner().StorageWriterEpoch; have != 7 {
		t.Errorf("want epoch 7, have %d", have)
	}
}

func TestLiveSchemaV3OwnerIsNotPrunedAcrossProcesses(t *testing.T) {
	root := t.TempDir()
	sid := NewID()
	ready := filepath.Join(root, "hold-lease-ready")
	acquired := filepath.Join(root, "hold-lease-acquired")
	child := startHelper(t, helperCmd(t, "hold-lease", root, sid,
		helperReadyEnv+"="+ready, helperAcquiredEnv+"="+acquired))
	testutil.WaitFor(t, "the child to acquire", 5*time.Second, func() bool { return exists(acquired) })
	s := NewStore(root)
	owners, err := s.ActiveOwners(sid)
	if err != nil || len(owners) != 1 {
		t.Fatalf("want 1 active owner, have %d (%v)", len(owners), err)
	}
	if owners[0].SchemaVersion != 3 {
		t.Errorf("want schema 3, have %d", owners[0].SchemaVersion)
	}
	_, err = s.Acquire(context.Background(), sid, testContext("other", 7))
	wantOwned(t, err)
	if err := os.Remove(ready); err != nil {
		t.Fatal(err)
	}
	child.WaitOK(t, helperWait)
	mustAcquire(t, s, sid, testContext("next", 7))
}

// assertSubprocessBlockedByMaintenance is the seed's
// assert_subprocess_blocked_by_maintenance.
func assertSubprocessBlockedByMaintenance(t *testing.T, action string) {
	root := t.TempDir()
	sid := NewID()
	s := NewStore(root)
	m, err := s.AcquireMaintenance(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	ready := filepath.Join(root, action+"-ready")
	acquired := filepath.Join(root, action+"-acquired")
	child := startHelper(t, helperCmd(t, action, root, sid,
		helperReadyEnv+"="+ready, helperAcquiredEnv+"="+acquired))
	testutil.WaitFor(t, "the subprocess ready", 5*time.Second, func() bool {
		if child.Exited() {
			t.Fatalf("want the subprocess to attempt the lock, it exited: %v", child.Err())
		}
		return exists(ready)
	})
	time.Sleep(150 * time.Millisecond)
	if exists(acquired) {
		t.Fatal("want the subprocess blocked by maintenance, it acquired")
	}
	if child.Exited() {
		t.Fatalf("want the subprocess still waiting, it exited: %v", child.Err())
	}
	m.Release()
	testutil.WaitFor(t, "the subprocess to finish after release", 5*time.Second, child.Exited)
	if child.Err() != nil {
		t.Fatalf("want the subprocess to succeed, have %v", child.Err())
	}
	if !exists(acquired) {
		t.Error("want the subprocess to have acquired the released lock")
	}
}

func TestMaintenanceBlocksSessionLeaseInAnotherProcess(t *testing.T) {
	assertSubprocessBlockedByMaintenance(t, "lease")
}

func TestMaintenanceBlocksSessionWriteLockInAnotherProcess(t *testing.T) {
	assertSubprocessBlockedByMaintenance(t, "write")
}
