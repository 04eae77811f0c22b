package claim

import (
	"fmt"
	"os"
	"time"

	"github.com/leasewrap/leasewrap/lease"
)

// ContendedError reports that Acquire gave up while the claim's recovery mutex
// stayed held. It matches lease.ErrHeld; a crashed peer's mutex is stolen once
// older than 120 s.
type ContendedError struct {
	Key, Path, Mutex string
	// Owner is the mutex's owner token (host:pid:ns), "" when it has none.
	Owner string
	// Age is the mutex's age by its modification time.
	Age time.Duration
}

func (e *ContendedError) Error() string {
	owner := e.Owner
	if owner == "" {
		owner = "nobody recorded (its holder died before writing the owner file)"
	}
	return fmt.Sprintf("claim %q: recovery mutex %s is held (owner: %s, age %s); a live peer finishes within seconds, a crashed peer's mutex is taken over automatically once older than %s — wait for it (--wait), or remove it by hand only if no process named in it runs",
		e.Key, e.Mutex, owner, e.Age.Round(time.Second), staleMutexSteal)
}

// Is makes errors.Is(err, lease.ErrHeld) true.
func (e *ContendedError) Is(target error) bool { return target == lease.ErrHeld }

func (c *Claims) contended(key, path string) error {
	mutex := recoveryMutex(path)
	fi, err := os.Lstat(mutex)
	if err != nil {
		return fmt.Errorf("acquire %q gave up after %d contention retries on %s", key, acquireAttempts, path)
	}
	return &ContendedError{Key: key, Path: path, Mutex: mutex, Owner: readOwner(mutex), Age: max(c.now().Sub(fi.ModTime()), 0)}
}
