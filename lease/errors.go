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
	// ErrRefused reports a record leasewrap will not touch or decide on (corrupt,
	// foreign, newer schema, unreadable, unverifiable); nothing was changed.
	ErrRefused = errors.New("lease: refused")
	// ErrUnavailable reports that a distributed kind's service (etcd, a Kubernetes
	// API server) did not answer or refused: nothing was taken or run (exit 69).
	ErrUnavailable = errors.New("lease: service unavailable")
	// ErrNoPerm reports that such a service refused us: TLS, credentials or
	// permission (exit 77). Nothing was taken.
	ErrNoPerm = errors.New("lease: permission refused")
)

// HeldError is Acquire's contention error, naming the holder as precisely as the
// protocol allows.
type HeldError struct {
	Kind   string
	Key    string
	Holder string // the other holder's identity, if known
	PID    int    // the other holder's pid, if known
	Host   string // the other holder's host, if known
	// Since is when the other holder took the lease, if known.
	Since time.Time
	// Detail says more, for people.
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

// HolderAttrs are slog attributes of the other holder beyond its identity:
// holder_pid, holder_host, held_since and held_for.
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

// HolderProcess returns the other holder's pid and host, as far as known.
func (e *HeldError) HolderProcess() (pid int, host string) { return e.PID, e.Host }

// Is makes errors.Is(err, ErrHeld) true for a *HeldError.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// ReplayError reports work already done and published: the child must not run,
// and leasewrap exits with ExitCode.
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
