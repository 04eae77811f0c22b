package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/lease/session"
)

// TestSessionRunTryOnceDuringMaintenance: while maintenance holds the
// coordinator, `session run --wait 0` gives up after the short try-once
// wait (session.TryOnceLockWait) with 75, not after the seed's 10 s
// budget, and runs nothing.
func TestSessionRunTryOnceDuringMaintenance(t *testing.T) {
	root := sessionRoot(t)
	dir := t.TempDir()
	ready, gone, ran := filepath.Join(dir, "ready"), filepath.Join(dir, "gone"), filepath.Join(dir, "ran")
	maint := startLW(t, nil, "session", "maintain", testSID, "--root", root, "--", "sh", "-c", holdUntil(ready, gone))
	waitFor(t, "maintenance to hold the coordinator", func() bool { return exists(ready) })

	started := time.Now()
	have, p := runLW(t, nil, "session", "run", testSID, "--root", root, "--epoch", "6", "--wait", "0", "--", "touch", ran)
	took := time.Since(started)
	if have != 75 {
		t.Fatalf("want 75, have %d\n%s", have, &p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "busy for") {
		t.Fatalf("want the busy coordinator named, have:\n%s", &p.stderr)
	}
	// Not a performance bound: the seed's budget is what it must not wait.
	if took >= session.LockWaitBudget {
		t.Fatalf("gave up after %v: the try-once run waited out the seed's %v budget", took, session.LockWaitBudget)
	}
	if exists(ran) {
		t.Fatal("the command ran during maintenance")
	}
	os.WriteFile(gone, nil, 0o644)
	if have := maint.wait(t); have != 0 {
		t.Fatalf("maintenance: want 0, have %d\n%s", have, &maint.stderr)
	}
	t.Logf("--wait 0 gave up after %v", took)
}

// TestSessionRunTryOnceWaitsOutABriefHold: an owner's registration holds
// the coordinator for a moment; a try-once run that meets it waits it out
// and runs.
func TestSessionRunTryOnceWaitsOutABriefHold(t *testing.T) {
	flockBin, err := exec.LookPath("flock")
	testutil.Need(t, "flock(1) (util-linux)", err)
	root := sessionRoot(t)
	dir := t.TempDir()
	locked := filepath.Join(dir, "locked")
	lock := filepath.Join(root, "locks", testSID+".lock") // the session coordinator
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	holder := exec.Command(flockBin, "-x", lock, "sh", "-c", "touch "+locked+"; sleep 0.2")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Wait()
	waitFor(t, "the brief hold", func() bool { return exists(locked) })
	have, p := runLW(t, nil, "session", "run", testSID, "--root", root, "--epoch", "6", "--wait", "0", "--", "true")
	if have != 0 {
		t.Fatalf("want the run to wait out a 200ms hold and run (0), have %d\n%s", have, &p.stderr)
	}
}
