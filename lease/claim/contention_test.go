package claim

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/lease"
)

// Regression (reliability battery, claim.recovery-mutex-taken): a peer
// killed between mkdir of the recovery mutex and writing its owner left a
// young, ownerless mutex over a stale claim. Acquire gave up with a bare
// "gave up after 5 contention retries" error (leasewrap exit 70, and
// --wait stopped waiting). It must be a held conflict that explains the
// mutex, so waiting callers keep trying until the corpse is stolen.
func TestGivingUpOnAHeldRecoveryMutexIsAnExplainedConflict(t *testing.T) {
	c, _, mutex := staleClaimUnderAMutex(t)
	_, err := c.Acquire(t.Context(), "session:x", "pty:heir", AcquireOptions{})
	var ce *ContendedError
	if !errors.As(err, &ce) || !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("want a *ContendedError matching lease.ErrHeld, have %T %v", err, err)
	}
	if ce.Mutex != mutex || ce.Owner != "" || !strings.Contains(err.Error(), "taken over automatically") {
		t.Errorf("want the mutex, no owner and the resolution named, have %+v: %v", ce, err)
	}
	ageDir(t, mutex, staleMutexSteal+time.Second)
	if _, err := c.Acquire(t.Context(), "session:x", "pty:heir", AcquireOptions{}); err != nil {
		t.Fatalf("want the aged corpse stolen and the claim recovered, have %v", err)
	}
}

// Regression (reliability race storm, two holders at once): wrapper A's
// command exited, peer B found A's claim stale, archived it and created
// its own under the recovery mutex, and A's Release — which had read its
// own claim just before — removed B's new claim, so a third wrapper
// created one too. Release now removes only under the recovery mutex,
// re-reading inside it; when it cannot take the mutex it leaves the claim.
func TestReleaseNeverRemovesUnderAHeldRecoveryMutex(t *testing.T) {
	c, path, mutex := staleClaimUnderAMutex(t)
	if err := c.Release(t.Context(), "session:x", "h"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("release removed the claim while a reclaimer held the recovery mutex: %v", err)
	}
	os.Remove(mutex)
	if err := c.Release(t.Context(), "session:x", "h"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("want the claim released once the mutex is free, have %v", err)
	}
	if _, err := os.Stat(mutex); !os.IsNotExist(err) {
		t.Errorf("release left its recovery mutex behind: %v", err)
	}
}

// staleClaimUnderAMutex is claims whose session:x claim names a dead pid,
// under a young recovery mutex without an owner (a peer killed right after
// its mkdir); a mutex wait costs 20 ms.
func staleClaimUnderAMutex(t *testing.T) (c *Claims, path, mutex string) {
	t.Helper()
	c, root := newTestClaims(t)
	c.mutexWait = 20 * time.Millisecond
	path = lockfile(t, root, "session:x")
	writeRecord(t, path, record(999_999, 1, nil, systemHostname()))
	mutex = recoveryMutex(path)
	if err := os.Mkdir(mutex, 0o755); err != nil {
		t.Fatal(err)
	}
	return c, path, mutex
}
