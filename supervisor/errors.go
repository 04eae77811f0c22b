package supervisor

import (
	"errors"
	"fmt"
)

// ErrWaitTimeout reports that the lease was not acquired within the wait.
var ErrWaitTimeout = errors.New("supervisor: lease not acquired within --wait")

// ErrStart marks a failure to start the command (not found, not
// executable): the lease was released and nothing ran.
var ErrStart = errors.New("supervisor: cannot start the command")

// ChildExit is returned by Run when the child ran and exited: leasewrap must
// exit with Code (the child's status, or 128+N for death by signal N).
type ChildExit struct {
	Code int
}

func (e *ChildExit) Error() string { return fmt.Sprintf("child exited with status %d", e.Code) }
