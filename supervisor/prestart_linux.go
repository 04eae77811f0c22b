package supervisor

import (
	"context"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/inherit"
	"github.com/leasewrap/leasewrap/internal/fault"
	"github.com/leasewrap/leasewrap/lease"
)

// A waiter starts its child, stopped, while the lease is still held, at
// its first attempt that finds it held, and keeps it stopped across
// attempts: when the lease frees, the hand-over is the acquisition and the
// release of an already started child, not a fork and an exec (of the
// exec gate, a Go program, where ptrace is refused) on top. It does so
// for the kinds whose child's hand-over does not depend on the attempt,
// so the child is the one a later start would make:
//
//   - an anchored kind (a claim) records the pid of the process doing the
//     work, so its child is started stopped anyway; the holder is known
//     before any attempt (Anchor);
//   - a Foreknown kind (flock) hands over the holder and one open file
//     description it keeps across attempts. The child inherits that
//     description before the lock is taken; a flock belongs to the
//     description, so the grant of the waiter's blocking flock(2) (on a
//     duplicate of it) is the child's lock at once, and the child is let
//     go only once an attempt has found the lock on it.
//
// A stopped child never runs its command unless let go: a waiter that
// gives up (its wait runs out, a signal, an error) kills it; a traced
// child dies with leasewrap's thread should leasewrap be SIGKILLed
// (Pdeathsig until it stops at its exec, PTRACE_O_EXITKILL from then on,
// so its Pdeathsig is cleared while it waits: outliveEarly), and a gate
// exits without running anything when its pipe closes with leasewrap. The child
// is in the job's cgroup, under its limits, from its start (prepare).
// A waiting run that never took the lease starts nothing else; a run that
// does not wait (--wait 0) never prestarts.
//
// The attempt loop holds its OS thread for the whole wait (ptrace answers
// only the thread that started the child).

// prestarts reports whether a waiter for l starts its child before the
// lease frees.
func prestarts(l lease.Locker) bool {
	switch l.(type) {
	case lease.Anchor, lease.Foreknown:
		return true
	}
	return false
}

// prestart starts j's stopped child, handed h, now if none is waiting; a
// failure is only logged: the attempt that takes the lease starts the
// command as usual.
func (r *runner) prestart(j *job, h inherit.Handover) {
	if j.pending != nil || !tracedPdeathsig {
		// Without the parent-death signal (not amd64), a traced child
		// whose leasewrap is SIGKILLed is detached and runs: never let
		// one wait.
		return
	}
	unlock := lockThread()
	defer unlock()
	ch, err := r.startStoppedWith(j, h)
	if err != nil {
		r.cfg.Logger.Debug("could not start the stopped child while waiting; the acquiring attempt will", "err", err)
		return
	}
	r.outliveEarly(ch)
	j.pending, j.pendingWith = ch, h
	r.cfg.Logger.Debug("command started stopped; it runs once the lease is ours", "pid", ch.pid)
}

// prestartForeknown is prestart for a Foreknown kind: the child gets the
// descriptor the lease will be on.
func (r *runner) prestartForeknown(j *job, fk lease.Foreknown) {
	if j.pending != nil || !tracedPdeathsig {
		return // as prestart
	}
	f, err := fk.HandoverFile()
	if err != nil {
		r.cfg.Logger.Debug("could not prepare the child's descriptor while waiting; the acquiring attempt will", "err", err)
		return
	}
	r.prestart(j, inherit.Handover{Kind: j.locker.Kind(), Key: j.locker.Key(), Holder: fk.Holder(), File: f})
}

// startPending lets j's waiting stopped child (prestartForeknown) run
// under ls, the lease an attempt began at at has just taken, if ls hands
// over exactly what the child already has: the holder, no environment
// and the very descriptor, so the lock it carries is the child's. Where
// it does not (or the child is gone) that child is killed and the
// command starts as usual.
func (r *runner) startPending(ctx context.Context, j *job, ls lease.Lease, at time.Time) (*acquired, error) {
	ch, h := j.pending, j.pendingWith
	j.pending, j.pendingWith = nil, inherit.Handover{}
	f, _ := ls.(lease.FileHolder)
	same := f != nil && f.File() == h.File && ls.Holder() == h.Holder && len(ls.Env()) == 0 && !lease.DiesWithLeasewrap(ls, false)
	if !same {
		r.cfg.Logger.Warn("the lease taken hands over other than what the waiting child has; starting the command anew", "kind", j.locker.Kind())
		ch.kill()
		return r.startUnder(ctx, j, ls, at)
	}
	if !ch.waiting() {
		return r.startUnder(ctx, j, ls, at)
	}
	fault.Point("supervisor.after-acquire-before-start")
	at, err := r.letGoUnder(ctx, j, ls, ch, at)
	if err != nil {
		return nil, err
	}
	return &acquired{lease: ls, child: ch, at: at}, nil
}

// outliveEarly clears the parent-death signal of a traced child that
// waits stopped, now rather than on the hand-over's path: from its stop
// at exec PTRACE_O_EXITKILL kills it should leasewrap die before letting
// it go (startTraced), and once let go it outlives leasewrap as any
// started job does. A failure is left to the release to try again.
func (r *runner) outliveEarly(ch *child) {
	if !ch.traced || !tracedPdeathsig {
		return
	}
	if err := clearPdeathsig(ch.pid); err != nil {
		r.cfg.Logger.Debug("could not clear the stopped child's parent-death signal while waiting", "pid", ch.pid, "err", err)
		return
	}
	ch.deathsigCleared = true
}

// stoppedChild returns the waiting stopped child if it still waits, or a
// newly started one.
func (r *runner) stoppedChild(j *job, an lease.Anchor) (*child, error) {
	if ch := j.pending; ch != nil {
		j.pending = nil
		if ch.waiting() {
			return ch, nil
		}
	}
	return r.startStoppedWith(j, anchoredHandover(j, an))
}

// waiting reports whether the stopped child still waits for its release.
// One that does not is gone (killed from outside) and now reaped.
func (ch *child) waiting() bool {
	var ws unix.WaitStatus
	switch pid, _ := unix.Wait4(ch.pid, &ws, unix.WNOHANG|unix.WALL, nil); pid {
	case 0:
		return true
	case ch.pid:
		if ch.gate != nil {
			ch.gate.Close()
			ch.gate = nil
		}
	default:
		ch.kill()
	}
	return false
}

// anchoredHandover is what an anchored kind's child is handed: the
// holder an will take the lease as, nothing else.
func anchoredHandover(j *job, an lease.Anchor) inherit.Handover {
	return inherit.Handover{Kind: j.locker.Kind(), Key: j.locker.Key(), Holder: an.Holder()}
}

// startStoppedWith starts j's command stopped, handed h, as j's job.
func (r *runner) startStoppedWith(j *job, h inherit.Handover) (*child, error) {
	ch, err := r.startStopped(j, h)
	if err != nil {
		return nil, err
	}
	if j.hold != nil {
		j.hold.started(ch)
	}
	return ch, nil
}

// dropPending kills the stopped child a waiter that gives up still has.
func (j *job) dropPending() {
	if j.pending != nil {
		j.pending.kill()
		j.pending, j.pendingWith = nil, inherit.Handover{}
	}
}
