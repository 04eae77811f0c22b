package supervisor

import (
	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/inherit"
	"github.com/leasewrap/leasewrap/lease"
)

// An anchored kind (a claim) records the pid of the process doing the
// work, so its child is started stopped before the lease is taken. A
// waiter starts that child while the lease is still held, at its first
// attempt that finds it held, and keeps it stopped across attempts: when
// the lease frees, the hand-over is the acquisition and the release of an
// already started child, not a fork and an exec (of the exec gate, a Go
// program, where ptrace is refused) on top. The child's environment does
// not depend on the attempt (the holder is known before any, Anchor), so
// the child is the one a later start would make. A waiter that gives up
// kills it: a stopped child never runs its command.
//
// The attempt loop holds its OS thread for the whole wait (ptrace answers
// only the thread that started the child).

// prestart starts j's stopped child now if none is waiting; a failure is
// only logged: the attempt that takes the lease starts one again.
func (r *runner) prestart(j *job, an lease.Anchor) {
	if j.pending != nil || !tracedPdeathsig {
		// Without the parent-death signal (not amd64), a traced child
		// whose leasewrap is SIGKILLed is detached and runs: never let
		// one wait.
		return
	}
	unlock := lockThread()
	defer unlock()
	ch, err := r.startStoppedFor(j, an)
	if err != nil {
		r.cfg.Logger.Debug("could not start the stopped child while waiting; the acquiring attempt will", "err", err)
		return
	}
	j.pending = ch
}

// stoppedChild returns the waiting stopped child if it still waits, or a
// newly started one.
func (r *runner) stoppedChild(j *job, an lease.Anchor) (*child, error) {
	if ch := j.pending; ch != nil {
		j.pending = nil
		var ws unix.WaitStatus
		switch pid, _ := unix.Wait4(ch.pid, &ws, unix.WNOHANG|unix.WALL, nil); pid {
		case 0:
			return ch, nil // still stopped, waiting for us
		case ch.pid: // gone (killed from outside), and now reaped
			if ch.gate != nil {
				ch.gate.Close()
			}
		default:
			ch.kill()
		}
	}
	return r.startStoppedFor(j, an)
}

// startStoppedFor starts j's command stopped, its environment built from
// the holder an will take the lease as.
func (r *runner) startStoppedFor(j *job, an lease.Anchor) (*child, error) {
	h := inherit.Handover{Kind: j.locker.Kind(), Key: j.locker.Key(), Holder: an.Holder()}
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
		j.pending = nil
	}
}
