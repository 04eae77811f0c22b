package lease

import (
	"context"
	"os"
	"syscall"
	"time"
)

// Locker acquires one lease: one kind, one key, one holder identity. A
// Locker is configured once (by its kind's constructor) and may be asked to
// Acquire several times while a supervisor waits for the lease.
//
// Implementations must be safe for use by one goroutine at a time; the
// supervisor never calls a Locker concurrently.
type Locker interface {
	// Kind names the lease kind: "claim", "reservation", "session" or
	// "session-maintenance". It is exported to the child as LEASEWRAP_KIND.
	Kind() string
	// Key is the lease's key as the user gave it (LEASEWRAP_KEY).
	Key() string
	// Holder is the identity the lease is taken as (LEASEWRAP_HOLDER).
	Holder() string

	// Anchored reports how Acquire relates to the child's start.
	//
	// An anchored kind (claim) records the pid of the process that does the
	// work: the supervisor starts the child stopped before its first
	// instruction, calls Acquire with that pid, and lets it run only if
	// Acquire succeeded. Such a kind's Lease.File returns nil.
	//
	// An unanchored kind (reservation, session) is acquired before the
	// child exists (pid 0) and hands the child a locked descriptor through
	// Lease.File instead.
	Anchored() bool

	// Acquire tries once to take the lease. pid is the anchor process for an
	// anchored kind and 0 otherwise.
	//
	// Contention is reported as an error that matches ErrHeld (usually a
	// *HeldError naming the holder). Work that is already done is reported
	// as a *ReplayError. Any other error is fatal for this invocation and
	// must leave every record it did not create untouched.
	Acquire(ctx context.Context, pid int) (Lease, error)

	// Watches lists the directory entries whose changes may mean the lease
	// became free (a record removed, renamed, published, a lock file's last
	// writer closed). Waiters watch them (inotify) between attempts and fall
	// back to jittered polling, so an empty list is valid but slow. A
	// kind's own failed attempt must not change a watched entry, or its
	// waiters wake themselves.
	Watches() []Watch
}

// Watch names a directory and the entries in it that matter; no Names
// means every entry.
type Watch struct {
	Dir   string
	Names []string
}

// Prober is an optional interface of anchored kinds: Probe tells, without
// creating or changing anything, that the lease is visibly held (an error
// matching ErrHeld), so the supervisor need not start a stopped child only
// to kill it. A nil answer proves nothing: Acquire still decides.
type Prober interface {
	Probe(ctx context.Context) error
}

// Starter is an optional interface of a Lease: Started is called once the
// child runs under it, for work that must not delay the child's start
// (a claim's audit events). Finish may come without Started when the child
// never ran.
type Starter interface {
	Started(ctx context.Context)
}

// Lease is a held lease. All methods are called from the supervisor's
// goroutines one at a time, except that Finish may follow a Renew that was
// interrupted.
type Lease interface {
	// File returns the locked descriptor the child must inherit to keep the
	// lease live without leasewrap (LEASEWRAP_FD), or nil. The supervisor
	// passes it through exec.Cmd.ExtraFiles (which clears FD_CLOEXEC on the
	// child's copy only) and never closes or unlocks it: the Lease keeps it
	// open until Finish, which closes it. The lock therefore lives as long
	// as leasewrap or the child (or anything the child passed it to) does.
	File() *os.File

	// Env returns extra KEY=VALUE pairs for the child (for example
	// LEASEWRAP_RUN_ID). LEASEWRAP_KIND, _KEY, _HOLDER and _FD are added by
	// the supervisor.
	Env() []string

	// TTL is the lease's time to live, renewed by Renew; 0 means the lease
	// does not expire (liveness is a process or a lock).
	TTL() time.Duration

	// Renew extends a TTL lease by TTL from now, or, for a lease without a
	// TTL, checks that it is still ours. It returns an error matching
	// ErrLost when the lease is no longer ours (another holder, removed,
	// corrupted, expired); any other error is transient and will be retried.
	Renew(ctx context.Context) error

	// Finish settles the lease after the child has exited: release it, or
	// publish the result. It is called exactly once, under a context that is
	// not the (possibly cancelled) run context. It must not touch a record
	// that is no longer ours.
	Finish(ctx context.Context, res Result) error
}

// Result describes how the wrapped child ended.
type Result struct {
	// ExitCode is the child's exit status, or 128+N if it died of signal N.
	ExitCode int
	// Signal is the signal that killed the child, or 0.
	Signal syscall.Signal
	// Lost is true when the supervisor stopped the child because the lease
	// was lost. Finish must then not publish anything.
	Lost bool
	// Argv is the command that ran.
	Argv []string
	// Started and Finished are wall-clock times of the child's start and end.
	Started, Finished time.Time
}
