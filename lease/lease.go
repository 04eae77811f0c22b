package lease

import (
	"context"
	"os"
	"syscall"
	"time"
)

// Locker acquires one lease: one kind, one key. It is what every backend
// can honestly do; capabilities only some backends have are the optional
// interfaces below (Anchor, Notifier and Queuer on a Locker, FileHolder on
// a Lease), discovered with a type assertion the way io.WriterTo is.
//
// A Locker is configured once (by its kind's constructor) and its
// configuration does not change: what an Acquire took (the holder, a run
// id) is described by the Lease it returns. It may be asked to Acquire
// several times while a supervisor waits. Implementations must be safe
// for use by one goroutine at a time; the supervisor never calls a Locker
// concurrently.
type Locker interface {
	// Kind names the lease kind ("claim", "reservation", "session", "lock",
	// ...). It is exported to the child as LEASEWRAP_KIND.
	Kind() string
	// Key is the lease's key as the user gave it (LEASEWRAP_KEY).
	Key() string

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
// supervisor abandoned at the fencing deadline is still blocked. Holder,
// Env, TTL and Done may be called from any goroutine.
type Lease interface {
	// Holder is the identity the lease is held as (LEASEWRAP_HOLDER): the
	// configured holder, or what the acquisition chose (a run id).
	Holder() string

	// Env returns extra KEY=VALUE pairs for the child (for example
	// LEASEWRAP_RUN_ID). LEASEWRAP_KIND, _KEY, _HOLDER and _FD are added by
	// the supervisor.
	Env() []string

	// TTL is the lease's time to live as granted, renewed by Renew; 0 means
	// the lease does not expire (liveness is a process or a lock). The
	// supervisor fences itself at (start of the last successful renewal) +
	// TTL - kill grace - margin, whatever Renew is doing then.
	TTL() time.Duration

	// Done is closed when the kind learns by itself that the lease is lost
	// (a watch saw its record deleted or replaced, its session expired):
	// the supervisor then stops the job at once instead of at the next
	// renewal, the way etcd's Session.Done works. It is nil for a kind
	// that cannot push loss; Renew and the fence cover those.
	Done() <-chan struct{}

	// Renew makes one attempt to extend a TTL lease by TTL from now, or,
	// for a lease without a TTL, to check that it is still ours. ctx ends
	// no later than the fencing deadline. It returns an error matching
	// ErrLost only when the lease is no longer ours (another holder,
	// removed, corrupted, expired); any other error is transient and is
	// retried until the fencing deadline.
	Renew(ctx context.Context) error

	// Finish settles the lease after the job has ended: release it, or
	// publish the result. It is called exactly once, under a context that
	// is not the (possibly cancelled) run context and that ends at the
	// settle deadline; a Finish still running then is abandoned (left to
	// return on its own) like a hung renewal. It must not touch a record
	// that is no longer ours. When res.PastFence is set it settles
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
	// Forwarded is the terminating signal (TERM, INT, HUP, QUIT) that
	// leasewrap passed on to the job from outside (a shutdown) and that
	// ended it: the child died of it, or exited 128+N for it as a shell
	// reports a child killed by it. 0 otherwise. Such a status is not the
	// job's own result: a kind that publishes results must not record it
	// as the key's permanent outcome unless asked to.
	Forwarded syscall.Signal
	// Lost is true when the supervisor stopped the job because the lease
	// was lost. Finish must then not publish anything.
	Lost bool
	// TimedOut is true when the supervisor stopped the job because it ran
	// past its time limit (--timeout). The lease is still ours and is
	// settled normally, but the run is a failure: ExitCode is never 0 then
	// (124 when the job exited 0 on the stop signal), so a kind that
	// publishes only successes does not publish it.
	TimedOut bool
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

// Anchor is the optional Locker interface of kinds that record the pid of
// the process doing the work (a claim), so that the lease stays live for
// as long as the work goes on, whatever happens to leasewrap. The
// supervisor asks Probe, starts the child stopped before its first
// instruction, calls AcquireAnchored with its pid, lets it run only if
// that succeeded, and then calls Started. Such a kind's Acquire anchors
// the lease to the calling process instead.
type Anchor interface {
	// Holder (Identity) is the identity the lease will be taken as, known
	// before any acquisition: the stopped child's environment is built
	// from it.
	Identity
	// Probe tells, without creating or changing anything, that the lease
	// is visibly held (an error matching ErrHeld), so the supervisor need
	// not start a stopped child only to kill it. A nil answer proves
	// nothing: the acquire still decides.
	Probe(ctx context.Context) error
	// AcquireAnchored is Acquire for the process pid. The Lease it returns
	// hands over nothing but the holder (no Env, no FileHolder).
	AcquireAnchored(ctx context.Context, pid int) (Lease, error)
	// Started is called once the child runs under ls (a lease this Anchor
	// returned), for work that must not delay the child's start (a claim's
	// audit events). Finish may come without Started when the child never
	// ran.
	Started(ctx context.Context, ls Lease)
}

// Identity is an optional Locker interface of kinds that know, before
// any acquisition, the holder they will acquire as (LEASEWRAP_HOLDER): a
// claim's or a flock's --holder, a session's instance, an etcd lock's or a
// kube Lease's holder identity. The supervisor checks the command against
// the environment it will get (an exec the kernel would refuse with E2BIG)
// before anything is acquired; without Identity that check counts an empty
// holder. A Lease's own Holder is what the child gets in the end.
type Identity interface {
	Holder() string
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

// Granter is an optional Wake interface of a wake-up source that is
// itself the wait for the lease (the flock kind's blocking flock(2), which
// the kernel grants): while Grants reports true, an attempt before Wait
// reports a wake-up would only find the lease held, so none is made.
type Granter interface {
	Grants() bool
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

// DiesWithLeasewrap reports whether ls is kept alive by leasewrap's
// renewals alone: it has a TTL, hands the child no descriptor and was not
// anchored to the child's pid (anchored says so). Such a lease expires
// soon after leasewrap dies and another holder may then take it, so the
// supervisor makes the job die with leasewrap too. A lease the child
// keeps live by itself (a locked descriptor it inherited, its own pid
// recorded) must not: the job is then meant to outlive leasewrap.
func DiesWithLeasewrap(ls Lease, anchored bool) bool {
	if anchored || ls.TTL() == 0 {
		return false
	}
	if f, ok := ls.(FileHolder); ok && f.File() != nil {
		return false
	}
	return true
}

// LossCause is an optional capability of a Lease whose Done channel can
// close: once Done is closed, LossCause says why the kind saw the lease
// lost (matching ErrLost), for example "rewritten by another (holder now
// \"b\")". The supervisor reports it instead of a generic reason; nil
// means the kind does not know.
type LossCause interface {
	LossCause() error
}

// Confirmed is an optional Lease interface of TTL kinds that know when
// their lease was last extended: ConfirmedAt is the monotonic start
// (time.Now() taken before the request was sent, never an answer's time)
// of the latest request whose answer extended the lease by TTL (its grant,
// or a keep-alive, the ones made while it waited in a queue included), or
// the zero time. The server extended it after that instant, so the lease
// lives at least until ConfirmedAt + TTL. A queued lease granted with a
// recent enough confirmation starts its job with the fence counted from it
// instead of paying one more renewal first. It may be called from any
// goroutine.
type Confirmed interface {
	ConfirmedAt() time.Time
}
