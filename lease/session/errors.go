package session

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrInvalidID reports a session id that is not a canonical lowercase
	// hyphenated UUID.
	ErrInvalidID = errors.New("session: invalid session id")
	// ErrMissingWriterEpoch reports an owner registration without a storage
	// writer epoch; the seed refuses anonymous writers.
	ErrMissingWriterEpoch = errors.New("session: storage writer epoch required")
	// ErrCorrupt reports an owner record that is not a well-formed owner
	// record (see DecodeOwner).
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

// OwnedError is the seed's OwnedByOtherDaemon: a remaining owner record
// refuses the registration (an incompatible owner) or the maintenance guard
// (any owner).
type OwnedError struct {
	SessionID ID
	// Owner is the refusing owner record and Path where it was read.
	Owner Owner
	Path  string
	// Liveness is the owner's liveness as classified when it was reported:
	// Live, Unverifiable (which never becomes Stale by waiting), or Stale if
	// it died in between.
	Liveness Liveness
	// Summary is the owner's identity as the seed formats it
	// ("pid 42, daemon instance X, storage writer epoch 6, ...").
	Summary string
}

func (e *OwnedError) Error() string {
	return fmt.Sprintf("session %s is open in another incompatible Bcode writer: %s", e.SessionID, e.Summary)
}

// UnverifiableError is the seed's UnverifiableOwnerMetadata: a *.json entry
// in the owner directory that cannot be read or decoded. It is never
// removed; a person must inspect it.
type UnverifiableError struct {
	Path string
	Err  error
}

func (e *UnverifiableError) Error() string {
	return fmt.Sprintf("session owner metadata at %s is malformed or uses an unsupported schema (%v); it was left untouched: inspect it and remove it by hand if its owner is gone", e.Path, e.Err)
}

func (e *UnverifiableError) Unwrap() error { return e.Err }

// LockTimeoutError is the seed's LockWaitTimeout: a lock stayed contended
// for the whole bounded wait.
type LockTimeoutError struct {
	Path   string
	Waited time.Duration
}

func (e *LockTimeoutError) Error() string {
	return fmt.Sprintf("timed out after %dms acquiring the session lock at %s", e.Waited.Milliseconds(), e.Path)
}
