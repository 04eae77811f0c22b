package supervisor

import (
	"context"
	"os/exec"
	"time"

	"github.com/leasewrap/leasewrap/inherit"
	"github.com/leasewrap/leasewrap/lease"
)

// startStopped starts the command behind the exec gate (gate_linux.go): a
// process with the command's pid that runs nothing until let go. A child
// that is to have the terminal gets it when it is let go (letGo), not at
// its start: while it waits, a ^C must reach leasewrap.
func (r *runner) startStopped(j *job, h inherit.Handover) (*child, error) {
	cmd, tty := r.prepareStopped(j, h)
	exe, err := r.helperExe("exec gate")
	if err != nil {
		return nil, err
	}
	ch, err := startGated(cmd, exe)
	if err != nil {
		return nil, err
	}
	ch.takeTTY = tty
	if j.hold != nil {
		j.hold.started(ch)
	}
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

// letGoUnder lets ch, a gated child that already has all ls hands over,
// run its command under ls, taken by an attempt that began at at: first
// readyToStart's checks and on-start hook, then the release. It returns
// the start of the renewal the fence counts from. On an error ch is
// killed and ls settled as never run.
func (r *runner) letGoUnder(ctx context.Context, j *job, ls lease.Lease, ch *child, at time.Time) (time.Time, error) {
	ch.awaitGate()
	at, err := r.readyToStart(ctx, j, ls, at)
	if err == nil {
		err = r.letGo(ch)
	}
	if err != nil {
		ch.kill()
		r.undo(j, ls, err)
	}
	return at, err
}
