package reserve

import (
	"errors"
	"fmt"

	"github.com/leasewrap/leasewrap/lease"
)

var (
	// ErrCorrupt: a record starting with "{" that is not a valid schema record
	// (idempotency_record_invalid).
	ErrCorrupt = errors.New("reserve: corrupt record")
	// ErrUnsupportedSchema: schema_version is not 1 (idempotency_record_unsupported).
	ErrUnsupportedSchema = errors.New("reserve: unsupported record schema")
	// ErrUnsafePath: a symlink or other non-regular file at a lock, record or lease path.
	ErrUnsafePath = errors.New("reserve: unsafe path")
	// ErrOwnerChanged: the record names another run (idempotency_owner_changed).
	ErrOwnerChanged = errors.New("reserve: reservation owner changed")
	// ErrInvalidRunID: a run id that cannot safely become a path.
	ErrInvalidRunID = errors.New("reserve: invalid run id")
	// ErrNoHome: no home directory could be resolved.
	ErrNoHome = errors.New("reserve: no home directory")
	// ErrLockTimeout: the per-key lock was not obtained in time.
	ErrLockTimeout = errors.New("reserve: key lock timeout")
	// ErrManifest: a manifest that exists but cannot be read or decoded.
	ErrManifest = errors.New("reserve: unreadable manifest")
)

// RecordError is a record, lock or manifest leasewrap refuses to touch; nothing
// was changed. It matches lease.ErrRefused and its Reason.
type RecordError struct {
	Path   string
	Reason error  // ErrCorrupt, ErrUnsupportedSchema, ErrUnsafePath, ErrInvalidRunID, ErrManifest
	Detail string // what is wrong and what to do
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("%v: %s: %s", e.Reason, e.Path, e.Detail)
}

// Unwrap returns the Reason sentinel.
func (e *RecordError) Unwrap() error { return e.Reason }

// Is makes errors.Is(err, lease.ErrRefused) true.
func (e *RecordError) Is(target error) bool { return target == lease.ErrRefused }
