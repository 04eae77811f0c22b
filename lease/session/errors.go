package session

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrInvalidID reports a session id that is not a lowercase hyphenated UUID.
	ErrInvalidID = errors.New("session: invalid session id")
	// ErrMissingWriterEpoch reports a registration without a storage writer epoch.
	ErrMissingWriterEpoch = errors.New("session: storage writer epoch required")
	// ErrCorrupt reports a malformed owner record (see DecodeOwner).
	ErrCorrupt = errors.New("session: corrupt owner record")
)

// IOError is a failed file-system operation on Path.
type IOError struct {
	Op   string
	Path string
	Err  error
}

func (e *IOError) Error() string {
	return fmt.Sprintf("session access I/O error at %s: %s: %v", e.Path, e.Op, e.Err)
}

func (e *IOError) Unwrap() error { return e.Err }

// MissingWriterEpochError is the seed's MissingStorageWriterEpoch.
type MissingWriterEpochError struct {
	SessionID ID
}

func (e *MissingWriterEpochError) Error() string {
	return fmt.Sprintf("session %s access requires an explicit storage writer epoch", e.SessionID)
}

// Is makes errors.Is(err, ErrMissingWriterEpoch) true.
func (e *MissingWriterEpochError) Is(target error) bool { return target == ErrMissingWriterEpoch }

// OwnedError is the seed's OwnedByOtherDaemon: a remaining owner refuses the
// registration (incompatible) or the maintenance guard (any owner).
type OwnedError struct {
	SessionID ID
	// Owner is the refusing owner record and Path where it was read.
	Owner Owner
	Path  string
	// Liveness is the owner's liveness when reported.
	Liveness Liveness
	// Summary is the owner's identity as the seed formats it.
	Summary string
}

func (e *OwnedError) Error() string {
	return fmt.Sprintf("session %s is open in another incompatible Bcode writer: %s", e.SessionID, e.Summary)
}

// UnverifiableError is the seed's UnverifiableOwnerMetadata: an unreadable or
// undecodable *.json entry, never removed.
type UnverifiableError struct {
	Path string
	Err  error
}

func (e *UnverifiableError) Error() string {
	return fmt.Sprintf("session owner metadata at %s is malformed or uses an unsupported schema (%v); it was left untouched: inspect it and remove it by hand if its owner is gone", e.Path, e.Err)
}

func (e *UnverifiableError) Unwrap() error { return e.Err }

// LockTimeoutError is the seed's LockWaitTimeout: the bounded wait ran out.
type LockTimeoutError struct {
	Path   string
	Waited time.Duration
}

func (e *LockTimeoutError) Error() string {
	return fmt.Sprintf("timed out after %dms acquiring the session lock at %s", e.Waited.Milliseconds(), e.Path)
}
