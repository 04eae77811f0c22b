package claim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHeldRecoveryMutexIsWaitedOnThenRecoveryProceeds(t *testing.T) {
	c, root := newTestClaims(t)
	path := lockfile(t, root, "session:x")
	writeRecord(t, path, record(os.Getpid(), 1, nil, systemHostname()))
	mutex := recoveryMutex(path)
	if err := os.Mkdir(mutex, 0o755); err != nil {
		t.Fatal(err)
	}
	// A peer mid-recovery that finishes shortly.
	done := make(chan error, 1)
	time.AfterFunc(120*time.Millisecond, func() { done <- os.Remove(mutex) })
	acq, err := c.Acquire(t.Context(), "session:x", "pty:waiter", AcquireOptions{})
	if err != nil || acq.Record.Holder != "pty:waiter" {
		t.Fatalf("want acquired by pty:waiter, have %v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("releaser: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("releaser never ran")
	}
}

func TestDeadlineExpiredWaiterNeverStealsAFreshRecoveryMutex(t *testing.T) {
	c, root := newTestClaims(t)
	c.mutexWait = 50 * time.Millisecond
	path := lockfile(t, root, "session:x")
	writeRecord(t, path, record(os.Getpid(), 1, nil, systemHostname()))
	mutex := recoveryMutex(path)
	if err := os.Mkdir(mutex, 0o755); err != nil {
		t.Fatal(err)
	}
	c.waitForRelease(t.Context(), mutex, 50*time.Millisecond)
	_, retry, err := c.recoverStale(t.Context(), path, "session:x", "pty:thief", AcquireOptions{})
	if !retry || err != nil {
		t.Errorf("want retry, have retry=%v err=%v", retry, err)
	}
	if _, err := os.Stat(mutex); err != nil {
		t.Errorf("recovery mutex was stolen: %v", err)
	}
	if rec := readClaim(t, root, "session:x"); rec.Holder != "h" {
		t.Errorf("stale claim must be untouched, have holder %s", rec.Holder)
	}
}

func TestRecoveryMutexCorpseIsStolenSoAClaimCannotBrick(t *testing.T) {
	c, root := newTestClaims(t)
	path := lockfile(t, root, "session:x")
	writeRecord(t, path, record(999_999, 1, nil, systemHostname()))
	mutex := recoveryMutex(path)
	if err := os.Mkdir(mutex, 0o755); err != nil {
		t.Fatal(err)
	}
	ageDir(t, mutex, staleMutexSteal+60*time.Second)
	if _, err := c.Acquire(t.Context(), "session:x", "pty:heir", AcquireOptions{}); err != nil {
		t.Fatalf("want acquired, have %v", err)
	}
	if _, err := os.Lstat(mutex); !os.IsNotExist(err) {
		t.Errorf("corpse survived the steal: %v", err)
	}
}

func TestEventsLockCorpseIsStolenWithinTheDaemonBudget(t *testing.T) {
	c, root := newTestClaims(t)
	events := filepath.Join(root, ".fno", "events.jsonl")
	lock := events + ".lock.d"
	os.MkdirAll(lock, 0o755)
	ageDir(t, lock, staleMutexSteal+60*time.Second)
	if err := c.appendEventLine(t.Context(), events, []byte(`{"ts":"t","type":"x"}`), 2*time.Second); err != nil {
		t.Fatalf("want the corpse stolen and the line appended, have %v", err)
	}
	if _, err := os.Lstat(lock); !os.IsNotExist(err) {
		t.Errorf("want lock released, have %v", err)
	}
	if b, _ := os.ReadFile(events); strings.Count(string(b), "\n") != 1 {
		t.Errorf("want one line, have %q", b)
	}
}

func TestDanglingSymlinkLockNeverSpins(t *testing.T) {
	c, _ := newTestClaims(t)
	dir := t.TempDir()
	lock := filepath.Join(dir, "events.jsonl.lock.d")
	if err := os.Symlink(filepath.Join(dir, "nonexistent"), lock); err != nil {
		t.Fatal(err)
	}
	if c.stealIfStale(lock) {
		t.Error("fresh dangling link was stolen")
	}
	ageDir(t, lock, staleMutexSteal+60*time.Second)
	if !c.stealIfStale(lock) {
		t.Error("stale dangling link was not stolen")
	}
	if _, err := os.Lstat(lock); !os.IsNotExist(err) {
		t.Errorf("want link gone, have %v", err)
	}
}

func TestRepeatedStealsNeverCollideOnTheReapName(t *testing.T) {
	c, _ := newTestClaims(t)
	lock := filepath.Join(t.TempDir(), "events.jsonl.lock.d")
	for i := range 3 {
		if err := os.Mkdir(lock, 0o755); err != nil {
			t.Fatal(err)
		}
		ageDir(t, lock, staleMutexSteal+60*time.Second)
		if !c.stealIfStale(lock) {
			t.Fatalf("steal %d failed", i)
		}
		if _, err := os.Lstat(lock); !os.IsNotExist(err) {
			t.Fatalf("steal %d left the lock: %v", i, err)
		}
	}
}

func TestEventsLockFreshContentionStillTimesOut(t *testing.T) {
	c, root := newTestClaims(t)
	events := filepath.Join(root, ".fno", "events.jsonl")
	os.MkdirAll(events+".lock.d", 0o755)
	if err := c.appendEventLine(t.Context(), events, []byte(`{"ts":"t","type":"x"}`), 300*time.Millisecond); err == nil {
		t.Error("fresh lock was stolen")
	}
}

func TestReleaseAfterStealLeavesNewHolderIntact(t *testing.T) {
	c, _ := newTestClaims(t)
	lock := filepath.Join(t.TempDir(), "events.jsonl.lock.d")
	victim, err := c.acquireDirMutex(t.Context(), lock, 5*time.Second, true)
	if err != nil {
		t.Fatalf("victim could not acquire: %v", err)
	}
	ageDir(t, lock, staleMutexSteal+60*time.Second)
	if !c.stealIfStale(lock) {
		t.Fatal("stealer did not reap the corpse")
	}
	newHolder, err := c.acquireDirMutex(t.Context(), lock, 5*time.Second, true)
	if err != nil || newHolder == victim {
		t.Fatalf("want a new holder with its own token, have %q (%v)", newHolder, err)
	}
	c.releaseDirMutex(lock, victim)
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("victim's release deleted the new holder's lock: %v", err)
	}
	c.releaseDirMutex(lock, newHolder)
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("new holder's release left the lock: %v", err)
	}
}

func TestConcurrentStealersHaveExactlyOneRenameWinner(t *testing.T) {
	root := t.TempDir()
	events := filepath.Join(root, ".fno", "events.jsonl")
	lock := events + ".lock.d"
	os.MkdirAll(lock, 0o755)
	ageDir(t, lock, staleMutexSteal+60*time.Second)
	outs := runHelpers(t, 4, root, func(i int) []string {
		return []string{"append", events, `{"ts":"t","type":"x","i":` + string(rune('0'+i)) + `}`}
	})
	for i, o := range outs {
		if o.Err != "" {
			t.Errorf("appender %d: %s", i, o.Err)
		}
	}
	b, _ := os.ReadFile(events)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want 4 whole lines, have %q", b)
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("torn line %q: %v", l, err)
		}
	}
}
