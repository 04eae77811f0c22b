package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"syscall"
	"time"

	"github.com/oklog/run"
	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/renew"
)

// jobEnd is how a supervised job ended.
type jobEnd struct {
	// status is the child's status; status.Lost is set when the job was
	// stopped because the lease was lost, status.Forwarded when a signal
	// leasewrap passed on ended it.
	status lease.Result
	// loss is why the lease was lost (matches lease.ErrLost), or nil.
	loss   error
	keeper *renew.Keeper
	lastOK time.Time // monotonic start of the last successful renewal
}

// supervise runs the job until it is over: the child exited and nothing
// of its job is left (unless LeaveStrays). Two actors: the keeper, which
// renews the lease (its fencing deadline a timer of its own that no
// renewal can postpone) and returns the loss as an error, and the loop,
// which owns the job. The keeper's error interrupts the loop (its context
// ends with the loss as cause); the loop's end interrupts the keeper.
func (r *runner) supervise(ctx context.Context, a *acquired, log *slog.Logger) jobEnd {
	end := jobEnd{lastOK: a.at}
	holder := a.lease.Holder()
	if a.child.tether != nil {
		defer a.child.tether.done() // the job is over: the guard may go
	}
	var k *renew.Keeper
	rc := r.cfg.renewConfig(a.lease.TTL(), a.lease.Renew)
	rc.OnRenew = func(started time.Time, took time.Duration, err error) {
		if err == nil {
			end.lastOK = started
		}
		r.emit(Event{Type: EventRenewed, Holder: holder, Latency: took, Err: err, Fence: k.Fence()})
	}
	k, err := renew.New(rc, a.at)
	if err != nil {
		// Checked before the child started (ValidateTiming): unreachable
		// unless a kind changes its TTL. Stop the job as if lost.
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(fmt.Errorf("%w: %w", lease.ErrLost, err))
		end.status, end.loss = r.loop(a, log).run(ctx)
		return end
	}
	end.keeper = k
	r.emit(Event{Type: EventAcquired, Holder: holder, Fence: k.Fence()})
	r.emit(Event{Type: EventStarted, Holder: holder, PID: a.child.pid})
	var g run.Group
	// Keeper: keeps the lease; returns an error when it is lost.
	actor(&g, ctx, func(ctx context.Context) error {
		err := k.Run(ctx)
		if errors.Is(err, renew.ErrFenced) && a.child.exited() {
			// The child ended on its own before the fence was noticed
			// (leasewrap was frozen): Finish decides, PastFence set.
			log.Warn("fencing deadline passed after the child exited; settling only if the lease is still ours")
			err = nil
		}
		if err == nil {
			<-ctx.Done() // stopped, or nothing to report: wait for the interrupt
			return nil
		}
		if errors.Is(err, renew.ErrFenced) {
			return fmt.Errorf("%w: %w", lease.ErrLost, err)
		}
		return err
	})
	// Loop: the job, from start to empty. The keeper's loss ends its
	// context, with the loss as the cause.
	l := r.loop(a, log)
	actor(&g, ctx, func(ctx context.Context) error {
		end.status, end.loss = l.run(ctx)
		return nil
	})
	g.Run()
	return end
}

// loop is the supervision of one job: one select over the child's exit
// (SIGCHLD), the signals to forward, the lease's loss and the kill timer,
// the way tini's main loop reads.
type loop struct {
	r      *runner
	child  *child
	done   <-chan struct{} // the lease's own loss, pushed (nil: never)
	cause  lease.LossCause // why done closed, if the kind says (nil: it does not)
	holder string
	log    *slog.Logger

	// forwarded are the terminating signals passed on to the job.
	forwarded map[syscall.Signal]bool
}

func (r *runner) loop(a *acquired, log *slog.Logger) *loop {
	l := &loop{r: r, child: a.child, done: a.lease.Done(), holder: a.lease.Holder(), log: log, forwarded: map[syscall.Signal]bool{}}
	l.cause, _ = a.lease.(lease.LossCause)
	if a.forwarded != 0 {
		l.forwarded[a.forwarded] = true
	}
	return l
}

// reapPoll is a safety net for the reaper. SIGCHLD wakes it: coalesced
// signals are harmless because each wake reaps every exited child, and the
// buffered channel keeps a signal that arrives between the last wait4 and
// the next select. An idle wrapper should not wake every second for it.
// groupPoll is how often a job that is being emptied is looked at.
const (
	reapPoll  = time.Minute
	groupPoll = 20 * time.Millisecond
)

// run supervises the job until it is over. ctx ending means stop the
// job: with a cause matching lease.ErrLost the lease was lost (returned
// as loss); otherwise the run was cancelled.
func (l *loop) run(ctx context.Context) (status lease.Result, loss error) {
	cfg := &l.r.cfg
	ch := l.child
	poll := time.NewTicker(reapPoll)
	defer poll.Stop()
	var (
		exited   bool
		stopping bool             // the job was told to stop (SIGTERM sent)
		emptying bool             // the child exited; its strays are being ended
		kill     *time.Timer      // SIGKILL of the job when it fires
		killC    <-chan time.Time // kill's channel while armed
		stopC    = ctx.Done()
		lostC    = l.done
	)
	defer func() {
		if kill != nil {
			kill.Stop() // no signal may reach a group id that could be reused
		}
	}()
	// stop ends the job: SIGTERM (and SIGCONT, so a stopped member sees
	// it), then SIGKILL after the grace; SIGKILL at once with no grace or
	// once nothing of the job's own is left to shut down cleanly.
	stop := func(now bool) {
		if now || cfg.KillGrace == 0 {
			ch.group.signal(unix.SIGKILL)
			killC = nil
			return
		}
		if stopping {
			return
		}
		stopping = true
		ch.group.signal(unix.SIGTERM)
		ch.group.signal(unix.SIGCONT)
		kill = time.NewTimer(cfg.KillGrace)
		killC = kill.C
	}
	for {
		if !exited {
			var stopped bool
			status, exited, stopped = ch.reap(cfg.Subreaper)
			if stopped {
				l.r.stopForShell(ch)
			}
			if exited {
				status.Forwarded = l.forwardedEnd(status)
				if cfg.LeaveStrays && loss == nil {
					return status, loss
				}
			}
		} else if cfg.Subreaper {
			reapOrphans()
		}
		if exited {
			left := ch.group.members()
			if len(left) == 0 {
				status.Lost = loss != nil
				return status, loss
			}
			if !emptying {
				emptying = true
				// What is left of a pid-only lease (it ended with the
				// child's pid) and of a lost lease is killed at once.
				now := ch.pidOnly || loss != nil
				how := "SIGTERM, then SIGKILL after the kill grace"
				if now || cfg.KillGrace == 0 {
					how = "SIGKILL"
				}
				l.log.Warn("child exited with processes of its job still running; stopping them before settling the lease",
					"count", len(left), "first", fmt.Sprint(firstMembers(left)), "how", how, "job", ch.group.String())
				stop(now)
				poll.Reset(groupPoll)
			}
		}
		select {
		case <-l.r.chld:
		case <-poll.C:
		case s := <-l.r.sigs:
			if err := ch.signal(s); err != nil && !errors.Is(err, unix.ESRCH) {
				l.log.Warn("could not forward signal", "signal", s, "err", err)
			}
			if sig, ok := s.(syscall.Signal); ok && isAbortSignal(sig) {
				l.forwarded[sig] = true
			}
		case <-stopC:
			stopC = nil
			if cause := context.Cause(ctx); errors.Is(cause, lease.ErrLost) {
				loss = cause
				l.r.emit(Event{Type: EventLost, Holder: l.holder, Err: loss})
			}
			stop(exited)
		case <-lostC:
			lostC = nil
			loss = fmt.Errorf("%w: the lease's record was removed or revoked", lease.ErrLost)
			if l.cause != nil && l.cause.LossCause() != nil {
				loss = l.cause.LossCause() // the kind's own reason
			}
			l.r.emit(Event{Type: EventLost, Holder: l.holder, Err: loss})
			stop(exited)
		case <-killC:
			killC = nil
			ch.group.signal(unix.SIGKILL)
		}
	}
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

// exited reports, without reaping it, whether the child has ended.
func (ch *child) exited() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, ch.pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if err == unix.ECHILD {
		return true // already reaped
	}
	if err != nil {
		return false
	}
	// Linux fills si_signo with SIGCHLD for a waitable child, 0 otherwise.
	return info.Signo != 0
}
