package supervisor

import (
	"context"
	"errors"
	"os/exec"
	"time"

	"github.com/leasewrap/leasewrap/inherit"
	"github.com/leasewrap/leasewrap/lease"
)

// A child started stopped before its first instruction (an anchored
// kind's, a waiter's): how it is started, and how it is let go.

// startStopped starts the command stopped before its first instruction,
// by ptrace or through the exec gate as Anchor says. Each try builds a
// fresh exec.Cmd: a refused ptrace start leaves its Cmd used up. A child
// that is to have the terminal gets it when it is let go (letGo), not at
// its start: while it waits stopped, a ^C must reach leasewrap.
func (r *runner) startStopped(j *job, h inherit.Handover) (*child, error) {
	cmd, tty := r.prepareStopped(j, h)
	mode := r.cfg.Anchor
	if mode == AnchorAuto && !mayTrace(cmd.Path) {
		mode = AnchorGate
	}
	var ch *child
	var err error
	if mode != AnchorGate {
		ch, err = startTraced(cmd)
		if err != nil && mode != AnchorPtrace && errors.Is(err, errPtraceRefused) {
			r.cfg.Logger.Debug("ptrace refused; using the exec gate", "err", err)
			mode = AnchorGate
			cmd, _ = r.prepareStopped(j, h)
		}
	}
	if mode == AnchorGate {
		var exe string
		if exe, err = r.helperExe("exec gate"); err == nil {
			ch, err = startGated(cmd, exe)
		}
	}
	if err != nil {
		return nil, err
	}
	ch.takeTTY = tty
	return ch, nil
}

// prepareStopped is prepare for a child started stopped: it reports
// whether the child is to have the terminal, and leaves it to letGo to
// hand it over.
func (r *runner) prepareStopped(j *job, h inherit.Handover) (*exec.Cmd, bool) {
	cmd := r.prepare(j, h)
	tty := cmd.SysProcAttr.Foreground
	cmd.SysProcAttr.Foreground = false
	return cmd, tty
}

// letGo lets a stopped child run its command, handing it the terminal
// first when it is to have it (startStopped).
func (r *runner) letGo(ch *child) error {
	if ch.takeTTY {
		ch.takeTTY = false
		if err := setForeground(r.cfg.Stdin, ch.group.pgid); err != nil {
			r.cfg.Logger.Debug("could not hand the terminal to the job", "err", err)
		}
	}
	return ch.release()
}

// letGoUnder lets ch, a child started stopped that already has all ls
// hands over (an anchored kind's, a waiter's), run its command under ls,
// taken by an attempt that began at at: first readyToStart's checks and
// on-start hook, then ch's parent-death signal cleared (a started job
// outlives leasewrap; should that fail it is still safe: the job then
// dies with leasewrap, and its lease with it), then the release. It
// returns the start of the renewal the fence counts from. On an error ch
// is killed and ls settled as never run.
func (r *runner) letGoUnder(ctx context.Context, j *job, ls lease.Lease, ch *child, at time.Time) (time.Time, error) {
	at, err := r.readyToStart(ctx, j, ls, at)
	if err == nil && ch.traced && tracedPdeathsig && !ch.deathsigCleared {
		if cerr := clearPdeathsig(ch.pid); cerr != nil {
			r.cfg.Logger.Warn("could not clear the command's parent-death signal; it will not outlive leasewrap", "pid", ch.pid, "err", cerr)
		}
	}
	if err == nil {
		err = r.letGo(ch)
	}
	if err != nil {
		ch.kill()
		r.undo(j, ls, err)
	}
	return at, err
}
