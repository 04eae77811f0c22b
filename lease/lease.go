package lease

import (
	"context"
	"os"
	"syscall"
	"time"
)

// Locker acquires one lease: one kind, one key, one holder identity. It is
// what every backend can honestly do; capabilities only some backends have
// are the optional interfaces below (Anchored, Prober, Notifier, Queuer on
// a Locker; FileHolder, Starter, LossNotifier, Ephemeral on a Lease),
// discovered with a type assertion the way io.WriterTo is.
//
// A Locker is configured once (by its kind's constructor) and may be asked
// to Acquire several times while a supervisor waits. Implementations must
// be safe for use by one goroutine at a time; the supervisor never calls a
// Locker concurrently.
type Locker interface {
	// Kind names the lease kind ("claim", "reservation", "session", "lock",
	// ...). It is exported to the child as LEASEWRAP_KIND.
	Kind() string
	// Key is the lease's key as the user gave it (LEASEWRAP_KEY).
	Key() string
	// Holder is the identity the lease is taken as (LEASEWRAP_HOLDER). A
	// kind may learn it only once acquired (a run id): the supervisor asks
	// again after Acquire.
	Holder() string

	// Acquire tries once to take the lease for the calling process.
	//
	// Contention is reported as an error that matches ErrHeld (usually a
	// *HeldError naming the holder). Work that is already done is reported
	// as a *ReplayError. Any other error is fatal for this invocation and
	// must leave every record it did not create untouched.
	Acquire(ctx context.Context) (Lease, error)
}

// Lease is a held lease. Renew is called from one goroutine at a time;
// Finish is called exactly once, and may run while a Renew that the
// supervisor abandoned at the fencing deadline is still blocked.
type Lease interface {
	// Env returns extra KEY=VALUE pairs for the child (for example
	// LEASEWRAP_RUN_ID). LEASEWRAP_KIND, _KEY, _HOLDER and _FD are added by
	// the supervisor.
	Env() []string

	// TTL is the lease's time to live as granted, renewed by Renew; 0 means
	// the lease does not expire (liveness is a process or a lock). The
	// supervisor fences itself at (start of the last successful renewal) +
	// TTL - kill grace - margin, whatever Renew is doing then.
	TTL() time.Duration

	// Renew makes one attempt to extend a TTL lease by TTL from now, or,
	// for a lease without a TTL, to check that it is still ours. ctx ends
	// no later than the fencing deadline. It returns an error matching
	// ErrLost only when the lease is no longer ours (another holder,
	// removed, corrupted, expired); any other error is transient and is
	// retried until the fencing deadline.
	Renew(ctx context.Context) error

	// Finish settles the lease after the job has ended: release it, or
	// publish the result. It is called exactly once, under a context that
	// is not the (possibly cancelled) run context. It must not touch a
	// record that is no longer ours. When res.PastFence is set it settles
	// normally only if it can prove the lease is still its own, and
	// otherwise returns an error matching ErrLost and publishes nothing.
	Finish(ctx context.Context, res Result) error
}

// Result describes how the wrapped job ended.
type Result struct {
	// ExitCode is the child's exit status, or 128+N if it died of signal N.
	ExitCode int
	// Signal is the signal that killed the child, or 0.
	Signal syscall.Signal
	// Lost is true when the supervisor stopped the job because the lease
	// was lost. Finish must then not publish anything.
	Lost bool
	// PastFence is true when the fencing deadline passed before the lease
	// could be settled (leasewrap was frozen, or a renewal hung) although
	// the job itself ended on its own. See Lease.Finish.
	PastFence bool
	// Fence is the fencing deadline in force when Finish was called, on
	// the monotonic clock; zero for a lease without TTL. A kind that
	// publishes must do so before it.
	Fence time.Time
	// Argv is the command that ran.
	Argv []string
	// Started and Finished are wall-clock times of the child's start and end.
	Started, Finished time.Time
}

// Anchored is an optional Locker interface of kinds that record the pid of
// the process doing the work (a claim): the supervisor starts the child
// stopped before its first instruction, calls AcquireAnchored with its pid,
// and lets it run only if that succeeded. Such a kind's Acquire anchors the
// lease to the calling process instead.
type Anchored interface {
	AcquireAnchored(ctx context.Context, pid int) (Lease, error)
}

// Prober is an optional interface of anchored kinds: Probe tells, without
// creating or changing anything, that the lease is visibly held (an error
// matching ErrHeld), so the supervisor need not start a stopped child only
// to kill it. A nil answer proves nothing: the acquire still decides.
type Prober interface {
	Probe(ctx context.Context) error
}

// Notifier is an optional Locker interface: the kind's own way to learn
// that a held lease may have become free (directory changes, a holder's
// exit, a watch on a key). Notify is called once before the first attempt,
// so no release between an attempt and the next Wait is missed. Without
// it the supervisor backs off between attempts.
type Notifier interface {
	Notify(ctx context.Context) (Wake, error)
}

// Wake is a Notifier's wake-up source.
type Wake interface {
	// Wait blocks until the lease may be free, max passed, or ctx ended; it
	// returns ctx.Err() only in the last case and reports whether something
	// happened (false: max passed). held is the last attempt's contention
	// error, which may name what to watch (a holder's pid).
	Wait(ctx context.Context, held error, max time.Duration) (woke bool, err error)
	Close() error
}

// Queuer is an optional Locker interface of kinds that keep a place in a
// queue while they wait (an etcd lock's FIFO): AcquireWait blocks until the
// lease is held or ctx ends (its deadline is the wait). On failure it
// leaves nothing behind (no queue entry, no session) and returns an error
// matching ErrHeld when the deadline passed, or ctx.Err(). The supervisor
// uses it instead of its own retry loop when it is asked to wait.
type Queuer interface {
	AcquireWait(ctx context.Context) (Lease, error)
}

// FileHolder is an optional Lease interface of kinds whose liveness is a
// locked descriptor: File returns the descriptor the child must inherit to
// keep the lease live without leasewrap (LEASEWRAP_FD), or nil. The
// supervisor passes it through exec.Cmd.ExtraFiles (which clears
// FD_CLOEXEC on the child's copy only) and never closes or unlocks it: the
// Lease keeps it open until Finish, which closes it.
type FileHolder interface {
	File() *os.File
}

// Starter is an optional Lease interface: Started is called once the
// child runs under the lease, for work that must not delay the child's
// start (a claim's audit events). Finish may come without Started when
// the child never ran.
type Starter interface {
	Started(ctx context.Context)
}

// LossNotifier is an optional Lease interface of kinds that learn of a loss
// by themselves (a watch saw the record deleted or replaced): the channel
// is closed when the lease is known lost, and the supervisor treats that
// as loss at once instead of waiting for the next renewal.
type LossNotifier interface {
	Lost() <-chan struct{}
}

// Ephemeral is an optional Lease interface marking a lease that dies with
// leasewrap's process (its keep-alive is sent by leasewrap alone, as with
// an etcd session). The supervisor then makes the job die with leasewrap
// too; a local kind, whose locked descriptor or pid keeps the lease live
// for as long as the child runs, must not implement it.
type Ephemeral interface {
	Ephemeral()
}

// Successor is an optional Lease interface of a pre-step's lease (a
// session's maintenance guard, under which a migration runs): once the
// pre-step's command has succeeded, Next turns this lease into the main
// command's lease without a gap in which another could take it. Next
// replaces Finish: on error, this lease has been settled.
type Successor interface {
	Next(ctx context.Context) (Lease, error)
}
