package claim

import (
	"errors"
	"fmt"

	"github.com/leasewrap/leasewrap/lease"
)

var (
	// ErrInvalid reports bad input rejected before any write.
	ErrInvalid = errors.New("claim: invalid input")
	// ErrCorrupt reports a claim file that is unparsable, not a mapping, of a
	// newer schema, or missing its key/holder.
	ErrCorrupt = errors.New("claim: corrupt record")
	// ErrHeldByOther reports another holder's live or suspect claim.
	ErrHeldByOther = errors.New("claim: held by other")
	// ErrNoRoot reports that no claims root could be resolved for a key.
	ErrNoRoot = errors.New("claim: no claims root")

	errGoneAway = errors.New("claim: file disappeared")
)

// CorruptError names a refused claim file and why. It matches ErrCorrupt and
// lease.ErrRefused.
type CorruptError struct {
	Path   string
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("claim file %s is corrupted (%s); inspect it and move it aside (for example into .expired/) to free the key", e.Path, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) and errors.Is(err, lease.ErrRefused) true.
func (e *CorruptError) Is(target error) bool {
	return target == ErrCorrupt || target == lease.ErrRefused
}

// HeldByOtherError is Acquire's contention outcome.
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
