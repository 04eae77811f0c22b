package supervisor

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/renew"
)

// loop is the supervision of one job: one select over the child's exit
// (SIGCHLD), the signals to forward, the lease's loss, the time limit and
// the kill deadline (supervise.go), and the state it keeps meanwhile.
type loop struct {
	r      *runner
	child  *child
	lease  lease.Lease
	done   <-chan struct{} // the lease's own loss, pushed (nil: never)
	holder string
	log    *slog.Logger
	keeper *renew.Keeper // nil: no keeper (its config was refused)
	stop   *stopper
	poll   *time.Ticker
	// timeLimit is when the job is stopped for running too long (zero:
	// never), an absolute instant from the command's start; limit its
	// timer.
	timeLimit time.Time
	limit     *time.Timer

	// forwarded are the terminating signals passed on to the job.
	forwarded map[syscall.Signal]bool

	status   lease.Result // the child's, once exited
	exited   bool         // the child exited (reaped)
	emptying bool         // the child exited; its strays are being ended
	loss     error        // why the lease was lost, once it was
	timedOut bool         // the job ran past its time limit
}

func (r *runner) loop(a *acquired, k *renew.Keeper, limit time.Time, log *slog.Logger) *loop {
	l := &loop{r: r, child: a.child, lease: a.lease, done: a.lease.Done(), holder: a.lease.Holder(), log: log, keeper: k, timeLimit: limit, forwarded: map[syscall.Signal]bool{}}
	if a.forwarded != 0 {
		l.forwarded[a.forwarded] = true
	}
	var killBy func() time.Time
	if k != nil {
		killBy = k.KillBy
	}
	l.stop = newStopper(a.child.group, r.cfg.stopSignal(), r.cfg.KillGrace, killBy)
	return l
}

// reap collects the child's end and drains what is left of its job; it
// reports whether the job is over. Once the child exited, its strays are
// stopped: at once for a pid-only lease (it ended with the child's pid) or
// a lost one, else with the stop signal and the kill grace.
func (l *loop) reap() (over bool) {
	cfg := &l.r.cfg
	ch := l.child
	if !l.exited {
		status, exited, stopped := ch.reap(cfg.Subreaper)
		if stopped {
			l.r.stopForShell(ch)
		}
		if !exited {
			return false
		}
		l.exited = true
		l.status = status
		l.status.Forwarded = l.forwardedEnd(status)
		if cfg.LeaveStrays && l.loss == nil {
			return true
		}
	} else if cfg.Subreaper {
		reapOrphans()
	}
	left := ch.group.members()
	if len(left) == 0 {
		return true
	}
	if !l.emptying {
		l.emptying = true
		now := ch.pidOnly || l.loss != nil
		how := unix.SignalName(l.stop.sig) + ", then SIGKILL after the kill grace"
		if now || cfg.KillGrace == 0 {
			how = "SIGKILL"
		}
		// A warning only where the child ended on its own and left them:
		// not while leasewrap stops the job (a loss, --timeout, an abort).
		say := l.log.Warn
		if l.loss != nil || l.timedOut || l.stop.stopping || l.stop.killed {
			say = l.log.Debug
		}
		say("child exited with processes of its job still running; stopping them before settling the lease",
			"count", len(left), "first", fmt.Sprint(firstMembers(left)), "how", how, "job", ch.group.String())
		l.stop.stop(time.Now(), now)
		l.poll.Reset(groupPoll)
	}
	return false
}

// forward passes a signal leasewrap received on to the job.
func (l *loop) forward(s os.Signal) {
	if err := l.child.signal(s); err != nil && !errors.Is(err, unix.ESRCH) {
		l.log.Warn("could not forward signal", "signal", s, "err", err)
	}
	if sig, ok := s.(syscall.Signal); ok && isAbortSignal(sig) {
		l.forwarded[sig] = true
	}
}

// lose records the loss of the lease (the first reason counts).
func (l *loop) lose(cause error) {
	if l.loss != nil {
		return
	}
	l.loss = cause
	l.r.emit(Event{Type: EventLost, Holder: l.holder, Err: cause})
}

// lossCause is why the kind's Done channel closed: its own reason when it
// gives one (lease.LossCause), else a generic one.
func (l *loop) lossCause() error {
	if lc, ok := l.lease.(lease.LossCause); ok {
		if err := lc.LossCause(); err != nil {
			if !errors.Is(err, lease.ErrLost) {
				err = fmt.Errorf("%w: %w", lease.ErrLost, err)
			}
			return err
		}
	}
	return fmt.Errorf("%w: the kind reported the lease lost (its record removed, replaced or revoked)", lease.ErrLost)
}

// expired is the loss of a lease whose kill deadline passed before the
// keeper reported its fence: leasewrap did not run in time (it was
// stalled), or the kill grace is zero and the two deadlines are one.
func (l *loop) expired() error {
	return fmt.Errorf("%w: %w", lease.ErrLost, &renew.FenceError{Late: time.Since(l.keeper.Fence())})
}

// timeoutC delivers when the time limit is reached (nil: no limit).
func (l *loop) timeoutC() <-chan time.Time {
	if l.timeLimit.IsZero() {
		return nil
	}
	l.limit = time.NewTimer(time.Until(l.timeLimit))
	return l.limit.C
}

// timeOut stops a job that ran past its time limit, as on a lost lease
// (the stop signal, SIGKILL at the limit + kill grace); the lease itself
// is still ours and is settled normally. A child that already exited is
// not timed out: what is left of its job is being stopped already.
func (l *loop) timeOut() {
	if l.exited {
		return
	}
	l.timedOut = true
	l.log.Warn("command ran past --timeout; stopping the job", "timeout", l.r.cfg.Timeout, "signal", unix.SignalName(l.stop.sig), "kill_grace", l.r.cfg.KillGrace)
	l.stop.stop(l.timeLimit, false)
}

// forwardedEnd is the forwarded signal that ended the child: it died of
// it, or exited 128+N for it (a shell reporting a child it killed).
func (l *loop) forwardedEnd(st lease.Result) syscall.Signal {
	if st.Signal != 0 && l.forwarded[st.Signal] {
		return st.Signal
	}
	if n := st.ExitCode - 128; st.Signal == 0 && n > 0 && n < 65 && l.forwarded[syscall.Signal(n)] {
		return syscall.Signal(n)
	}
	return 0
}

// maxLoggedMembers bounds the pids a straggler log line lists.
const maxLoggedMembers = 5

func firstMembers(m []member) []member {
	return m[:min(len(m), maxLoggedMembers)]
}
