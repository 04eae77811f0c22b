package claim

import (
	"errors"
	"fmt"

	"github.com/leasewrap/leasewrap/lease"
)

var (
	// ErrInvalid reports bad input (key, holder, TTL, metadata) rejected
	// before anything was written.
	ErrInvalid = errors.New("claim: invalid input")
	// ErrCorrupted reports a claim file that cannot be trusted: unparsable,
	// not a mapping, of a newer schema, or missing its key/holder.
	ErrCorrupted = errors.New("claim: corrupted record")
	// ErrHeldByOther reports that a live (or TTL-protected suspect) claim of
	// another holder exists.
	ErrHeldByOther = errors.New("claim: held by other")
	// ErrNoRoot reports that no claims root could be resolved for a key.
	ErrNoRoot = errors.New("claim: no claims root")

	errGoneAway = errors.New("claim: file disappeared")
)

// CorruptedError names a corrupted claim file and why it was refused. It
// matches ErrCorrupted and lease.ErrRefused: nothing was changed, and a
// person must resolve it.
type CorruptedError struct {
	Path   string
	Reason string
}

func (e *CorruptedError) Error() string {
	return fmt.Sprintf("claim file %s is corrupted (%s); inspect it and move it aside (for example into .expired/) to free the key", e.Path, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupted) and errors.Is(err, lease.ErrRefused) true.
func (e *CorruptedError) Is(target error) bool {
	return target == ErrCorrupted || target == lease.ErrRefused
}

// HeldByOtherError is the contention outcome of Acquire: another holder's
// claim is live or suspect.
type HeldByOtherError struct {
	Key    string
	Holder string
	PID    int
	Host   string
	State  State

	rec *Record // the record seen, for the detail (Locker)
}

func (e *HeldByOtherError) Error() string {
	return fmt.Sprintf("claim %q is held by %s (pid %d, host %s, %s)", e.Key, e.Holder, e.PID, e.Host, e.State)
}

// Is makes errors.Is(err, ErrHeldByOther) true.
func (e *HeldByOtherError) Is(target error) bool { return target == ErrHeldByOther }
