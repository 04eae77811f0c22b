package lease

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

var (
	// ErrHeld reports that another holder has the lease.
	ErrHeld = errors.New("lease: held by other")
	// ErrLost reports that a lease we held is no longer ours.
	ErrLost = errors.New("lease: lost")
	// ErrRefused reports a record leasewrap will not touch or decide on:
	// corrupt, foreign, of a newer schema, unreadable, or whose liveness
	// cannot be verified. Nothing was changed; a person must resolve it.
	ErrRefused = errors.New("lease: refused")
	// ErrUnavailable reports that the service a distributed kind keeps its
	// leases in (etcd, a Kubernetes API server) did not answer in time,
	// refused the connection or said it is unavailable: nothing was taken
	// and nothing ran (exit 69, EX_UNAVAILABLE). A kind wraps it with what
	// it tried and what to check.
	ErrUnavailable = errors.New("lease: service unavailable")
	// ErrNoPerm reports that such a service refused us: TLS, credentials
	// or permission (exit 77, EX_NOPERM). Nothing was taken.
	ErrNoPerm = errors.New("lease: permission refused")
)

// HeldError is the contention error of Acquire: the lease is held by
// someone else, named as precisely as the protocol allows.
type HeldError struct {
	Kind   string
	Key    string
	Holder string // the other holder's identity, if known
	PID    int    // the other holder's pid, if known
	Host   string // the other holder's host, if known
	// Since is when the other holder took the lease, if known.
	Since time.Time
	// Detail says more, for people (for example "creator live, not yet
	// published" or the session owner's identity).
	Detail string
}

func (e *HeldError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q is held", e.Kind, e.Key)
	if e.Holder != "" {
		fmt.Fprintf(&b, " by %s", e.Holder)
	}
	var who []string
	if e.PID > 0 {
		who = append(who, fmt.Sprintf("pid %d", e.PID))
	}
	if e.Host != "" {
		who = append(who, "host "+e.Host)
	}
	if len(who) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(who, ", "))
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	return b.String()
}

// HolderAttrs are the log attributes (slog key-value pairs) of what is
// known of the other holder beyond its identity: holder_pid, holder_host,
// and held_since with held_for when the kind knows when it took the lease.
func (e *HeldError) HolderAttrs() []any {
	var attrs []any
	if e.PID > 0 {
		attrs = append(attrs, "holder_pid", e.PID)
	}
	if e.Host != "" {
		attrs = append(attrs, "holder_host", e.Host)
	}
	if !e.Since.IsZero() {
		attrs = append(attrs, "held_since", e.Since.UTC().Format(time.RFC3339), "held_for", time.Since(e.Since).Round(time.Second))
	}
	return attrs
}

// HolderProcess returns the other holder's pid and host, as far as known:
// a wake-up source watches a local holder's exit (internal/fswatch.Holder).
func (e *HeldError) HolderProcess() (pid int, host string) { return e.PID, e.Host }

// Is makes errors.Is(err, ErrHeld) true for a *HeldError.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// ReplayError reports that the work behind the key was already done and
// published: the child must not run, and leasewrap exits with ExitCode.
type ReplayError struct {
	Kind     string
	Key      string
	ExitCode int
	// Summary describes what is replayed (run id, recorded exit code, when).
	Summary string
}

func (e *ReplayError) Error() string {
	return fmt.Sprintf("%s %q already done: %s", e.Kind, e.Key, e.Summary)
}
