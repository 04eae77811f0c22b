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
	c, root := newTestClaims(t)
	c.mutexWait = 20 * time.Millisecond
	path := lockfile(t, root, "session:x")
	writeRecord(t, path, record(999_999, 1, nil, systemHostname()))
	mutex := recoveryMutex(path)
	if err := os.Mkdir(mutex, 0o755); err != nil {
		t.Fatal(err)
	}
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
