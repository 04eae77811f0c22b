package lease

import (
	"context"
	"os"
	"syscall"
	"time"
)

// Locker acquires one lease: one kind, one key, configured once. It may Acquire
// several times while the supervisor waits, from one goroutine at a time.
// Optional capabilities are interfaces discovered by type assertion.
type Locker interface {
	// Kind names the lease kind ("claim", "session", ...): LEASEWRAP_KIND.
	Kind() string
	// Key is the lease's key as the user gave it (LEASEWRAP_KEY).
	Key() string

	// Acquire tries once to take the lease for the calling process. Contention
	// matches ErrHeld (usually a *HeldError); done work is a *ReplayError; any other
	// error is fatal and leaves every record it did not create untouched.
	Acquire(ctx context.Context) (Lease, error)
}

// Lease is a held lease. Renew is called from one goroutine at a time; Finish
// exactly once, possibly while an abandoned Renew is still blocked. Holder, Env,
// TTL and Done may be called from any goroutine.
type Lease interface {
	// Holder is the identity the lease is held as (LEASEWRAP_HOLDER).
	Holder() string

	// Env returns extra KEY=VALUE pairs for the child; the supervisor adds
	// LEASEWRAP_KIND, _KEY, _HOLDER and _FD.
	Env() []string

	// TTL is the granted time to live; 0 means no expiry. The supervisor fences at
	// (start of the last successful renewal) + TTL - kill grace - margin.
	TTL() time.Duration

	// Done is closed when the kind itself learns the lease is lost (a watch, an
	// expired session), so the job stops at once; nil for kinds that cannot push loss.
	Done() <-chan struct{}

	// Renew makes one attempt to extend a TTL lease by TTL from now, or checks a
	// lease without TTL is still ours; ctx ends by the fencing deadline. Only a lease
	// no longer ours matches ErrLost; other errors are retried until the fence.
	Renew(ctx context.Context) error

	// Finish releases the lease or publishes res, once, under a fresh context ending
	// at the settle deadline (abandoned past it). It must not touch a record no
	// longer ours; with res.PastFence it settles only if it proves the lease is
	// still its own, else returns ErrLost and publishes nothing.
	Finish(ctx context.Context, res Result) error
}

// Result describes how the wrapped job ended.
type Result struct {
	// ExitCode is the child's exit status, or 128+N if it died of signal N.
	ExitCode int
	// Signal is the signal that killed the child, or 0.
	Signal syscall.Signal
	// Forwarded is the terminating signal (TERM, INT, HUP, QUIT) leasewrap forwarded
	// that ended the job (died of it, or exited 128+N), else 0. It is not the job's
	// own result: a publishing kind records it only when asked to.
	Forwarded syscall.Signal
	// Lost is true when the job was stopped for loss; Finish must publish nothing.
	Lost bool
	// TimedOut is true when the job ran past --timeout. The lease is settled
	// normally but ExitCode is never 0 (124 if the job exited 0 on the stop signal).
	TimedOut bool
	// PastFence is true when the fencing deadline passed before settling although
	// the job ended on its own (see Lease.Finish).
	PastFence bool
	// Fence is the monotonic fencing deadline at Finish (zero without TTL); a
	// publishing kind must publish before it.
	Fence time.Time
	// Argv is the command that ran.
	Argv []string
	// Started and Finished are wall-clock times of the child's start and end.
	Started, Finished time.Time
}

// Anchor is the optional Locker interface of kinds that record the worker's pid
// (claim), so the lease lives as long as the work. The supervisor calls Probe,
// starts the child stopped, calls AcquireAnchored with its pid, lets it run only
// on success, then calls Started.
type Anchor interface {
	// Holder (Identity) must be known before acquiring: it builds the stopped
	// child's environment.
	Identity
	// Probe reports, changing nothing, a visibly held lease (matching ErrHeld); nil
	// proves nothing.
	Probe(ctx context.Context) error
	// AcquireAnchored is Acquire for pid; its Lease hands over only the holder.
	AcquireAnchored(ctx context.Context, pid int) (Lease, error)
	// Started is called once the child runs under ls, for work that must not delay
	// its start; Finish may come without it.
	Started(ctx context.Context, ls Lease)
}

// Identity is the optional Locker interface of kinds that know their holder
// (LEASEWRAP_HOLDER) before acquiring, so the supervisor can check the exec's
// environment size (E2BIG) before anything is taken.
type Identity interface {
	Holder() string
}

// Notifier is the optional Locker interface of kinds that learn a lease may be
// free (directory changes, a holder's exit, a watch). Notify is called once
// before the first attempt; without it the supervisor backs off.
type Notifier interface {
	Notify(ctx context.Context) (Wake, error)
}

// Wake is a Notifier's wake-up source.
type Wake interface {
	// Wait blocks until the lease may be free, max passed (woke false) or ctx ended
	// (ctx.Err()). held is the last contention error (it may name a pid to watch).
	Wait(ctx context.Context, held error, max time.Duration) (woke bool, err error)
	Close() error
}

// Granter is the optional Wake interface of a wait that is itself the grant
// (flock's blocking flock(2)): while Grants is true no attempt is made before
// Wait reports a wake-up.
type Granter interface {
	Grants() bool
}

// Queuer is the optional Locker interface of kinds that queue while waiting (an
// etcd lock): AcquireWait blocks until held or ctx ends, leaving nothing behind
// on failure (ErrHeld past the deadline, or ctx.Err()).
type Queuer interface {
	AcquireWait(ctx context.Context) (Lease, error)
}

// FileHolder is the optional Lease interface of kinds whose liveness is a locked
// descriptor: File is what the child inherits (LEASEWRAP_FD, via ExtraFiles), or
// nil. The supervisor never closes or unlocks it; Finish closes it.
type FileHolder interface {
	File() *os.File
}

// DiesWithLeasewrap reports whether only leasewrap's renewals keep ls alive (a
// TTL, no descriptor, not anchored): then the job dies with leasewrap, since
// another holder may take the lease soon after.
func DiesWithLeasewrap(ls Lease, anchored bool) bool {
	if anchored || ls.TTL() == 0 {
		return false
	}
	if f, ok := ls.(FileHolder); ok && f.File() != nil {
		return false
	}
	return true
}

// LossCause is the optional Lease interface that says, once Done is closed, why
// the lease was lost (matching ErrLost); nil when unknown.
type LossCause interface {
	LossCause() error
}

// Confirmed is the optional Lease interface of TTL kinds: ConfirmedAt is the
// monotonic start of the latest request whose answer extended the lease by TTL
// (queued keep-alives included), or zero, so the lease lives at least until
// ConfirmedAt + TTL and the fence can count from it. Safe from any goroutine.
type Confirmed interface {
	ConfirmedAt() time.Time
}
