package session

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// CurrentWriterEpoch is the current bcode build's session-storage writer epoch.
const CurrentWriterEpoch uint32 = 6

// SchemaVersion is the owner record schema this package writes.
const SchemaVersion uint32 = 3

// Owner is one owner record, field for field the seed's SessionLeaseOwner; nil
// is None (written as null).
type Owner struct {
	SchemaVersion      uint32
	SessionID          ID
	LeaseToken         string
	PID                uint32
	StorageWriterEpoch *uint32
	DaemonNamespace    *string
	BuildFingerprint   *string
	ProtocolVersion    *uint32
	Endpoint           *string
	ExecutablePath     *string
	DaemonInstanceID   *string
	AcquiredAtMs       uint64
	LastSeenMs         uint64
}

// OwnerContext is the identity in an owner record (the seed's
// SessionLeaseOwnerContext); nil is None.
type OwnerContext struct {
	// StorageWriterEpoch is required by every registration.
	StorageWriterEpoch *uint32
	DaemonNamespace    *string
	BuildFingerprint   *string
	ProtocolVersion    *uint32
	Endpoint           *string
	// ExecutablePath defaults to /proc/self/exe's target when nil.
	ExecutablePath *string
	// DaemonInstanceID is the re-entrancy key: the same epoch and present instance
	// id share the session.
	DaemonInstanceID *string
}

// Some returns a pointer to v: the seed's Some(v) for the optional fields.
func Some[T any](v T) *T { return &v }

// Liveness is the seed's SessionOwnerLiveness.
type Liveness int

const (
	// Live: positive evidence shows the owner is live.
	Live Liveness = iota + 1
	// Stale: positive evidence shows the owner is gone.
	Stale
	// Unverifiable: the owner cannot be classified safely.
	Unverifiable
)

// String is the seed's snake_case serialization: live, stale, unverifiable.
func (l Liveness) String() string {
	switch l {
	case Live:
		return "live"
	case Stale:
		return "stale"
	case Unverifiable:
		return "unverifiable"
	}
	return fmt.Sprintf("Liveness(%d)", int(l))
}

// MarshalText makes Liveness encode as its String.
func (l Liveness) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// newOwner is SessionLeaseOwner::new.
func newOwner(sid ID, oc *OwnerContext, pid int, now time.Time, executable func() (string, error)) Owner {
	ms := unixMillis(now)
	exe := oc.ExecutablePath
	if exe == nil {
		if p, err := executable(); err == nil {
			exe = &p
		}
	}
	return Owner{
		SchemaVersion:      SchemaVersion,
		SessionID:          sid,
		LeaseToken:         fmt.Sprintf("%d-%d-%s", pid, ms, sid),
		PID:                uint32(pid),
		StorageWriterEpoch: oc.StorageWriterEpoch,
		DaemonNamespace:    oc.DaemonNamespace,
		BuildFingerprint:   oc.BuildFingerprint,
		ProtocolVersion:    oc.ProtocolVersion,
		Endpoint:           oc.Endpoint,
		ExecutablePath:     exe,
		DaemonInstanceID:   oc.DaemonInstanceID,
		AcquiredAtMs:       ms,
		LastSeenMs:         ms,
	}
}

// currentExe is Rust's current_exe: the raw /proc/self/exe target.
func currentExe() (string, error) { return os.Readlink("/proc/self/exe") }

func unixMillis(t time.Time) uint64 {
	ms := t.UnixMilli()
	if ms < 0 {
		return 0
	}
	return uint64(ms)
}

// compatible is owner_is_compatible: same present epoch and instance id.
func compatible(o *Owner, oc *OwnerContext) bool {
	if o.StorageWriterEpoch == nil || oc.StorageWriterEpoch == nil || *o.StorageWriterEpoch != *oc.StorageWriterEpoch {
		return false
	}
	return o.DaemonInstanceID != nil && oc.DaemonInstanceID != nil && *o.DaemonInstanceID == *oc.DaemonInstanceID
}

// FormatOwner is the seed's format_owner: the owner's identity for people.
func FormatOwner(o *Owner) string {
	parts := []string{fmt.Sprintf("pid %d", o.PID)}
	if o.DaemonInstanceID != nil {
		parts = append(parts, "daemon instance "+*o.DaemonInstanceID)
	}
	if o.StorageWriterEpoch != nil {
		parts = append(parts, fmt.Sprintf("storage writer epoch %d", *o.StorageWriterEpoch))
	}
	if o.DaemonNamespace != nil {
		parts = append(parts, "namespace "+*o.DaemonNamespace)
	}
	if o.BuildFingerprint != nil {
		parts = append(parts, "build "+*o.BuildFingerprint)
	}
	if o.Endpoint != nil {
		parts = append(parts, "endpoint "+*o.Endpoint)
	}
	return strings.Join(parts, ", ")
}
