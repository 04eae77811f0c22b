package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/oklog/run"
	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/renew"
)

// jobEnd is how a supervised job ended.
type jobEnd struct {
	status   lease.Result // the child's; settle sets Lost from loss
	loss     error        // why the lease was lost (matches lease.ErrLost), or nil
	timedOut bool         // stopped past Config.Timeout
	keeper   *renew.Keeper
	lastOK   time.Time // monotonic start of the last successful renewal
}

// supervise runs the job until it is over with two actors: the keeper,
// whose loss ends the loop's context, and the loop, which owns the job.
// limit is the time limit (zero: none).
func (r *runner) supervise(ctx context.Context, a *acquired, limit time.Time, log *slog.Logger) jobEnd {
	end := jobEnd{lastOK: a.at}
	holder := a.lease.Holder()
	if a.child.guard != nil {
		defer a.child.guard.clear() // the job is over: the guard may go (settle reaps it)
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
		// Checked before the start; only a kind changing its TTL gets here.
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(fmt.Errorf("%w: %w", lease.ErrLost, err))
		end.status, end.loss, end.timedOut = r.loop(a, nil, limit, log).run(ctx)
		return end
	}
	end.keeper = k
	r.emit(Event{Type: EventStarted, Holder: holder, PID: a.child.pid})
	var g run.Group
	actor(&g, ctx, func(ctx context.Context) error {
		err := k.Run(ctx)
		if errors.Is(err, renew.ErrFenced) && a.child.exited() {
			// The child ended before the fence was noticed: Finish decides.
			log.Warn("fencing deadline passed after the child exited; settling only if the lease is still ours")
			err = nil
		}
		if err == nil {
			<-ctx.Done()
			return nil
		}
		if errors.Is(err, renew.ErrFenced) {
			return fmt.Errorf("%w: %w", lease.ErrLost, err)
		}
		return err
	})
	l := r.loop(a, k, limit, log)
	actor(&g, ctx, func(ctx context.Context) error {
		end.status, end.loss, end.timedOut = l.run(ctx)
		return nil
	})
	g.Run()
	return end
}

// reapPoll is the reaper's safety net (SIGCHLD wakes it); groupPoll how
// often a job being emptied is looked at.
const (
	reapPoll  = time.Minute
	groupPoll = 20 * time.Millisecond
)

// run supervises the job until it is over: reap, return when over, else
// wait for the next thing. ctx ending stops the job; a cause matching
// lease.ErrLost is the loss.
func (l *loop) run(ctx context.Context) (status lease.Result, loss error, timedOut bool) {
	defer l.stop.close()
	l.poll = time.NewTicker(reapPoll)
	defer l.poll.Stop()
	stopC, lostC := ctx.Done(), l.done
	var timeC <-chan time.Time
	if !l.timeLimit.IsZero() {
		limit := time.NewTimer(time.Until(l.timeLimit))
		defer limit.Stop()
		timeC = limit.C
	}
	for {
		if l.reap() {
			return l.status, l.loss, l.timedOut
		}
		select {
		case <-l.r.chld:
		case <-l.poll.C:
		case s := <-l.r.sigs:
			l.forward(s)
		case <-stopC:
			stopC = nil
			if cause := context.Cause(ctx); errors.Is(cause, lease.ErrLost) {
				l.lose(cause)
			}
			l.stop.stop(time.Now(), l.exited)
		case <-lostC:
			lostC = nil
			l.lose(l.lossCause())
			l.stop.stop(time.Now(), l.exited)
		case <-timeC:
			timeC = nil
			l.timeOut()
		case <-l.stop.C():
			// Read before the deadline's SIGKILL would make it true.
			ended := l.exited || l.child.exited()
			if l.stop.due() && !ended {
				l.lose(l.expired())
			}
		}
	}
}

// loop is the supervision of one job and the state it keeps meanwhile.
type loop struct {
	r         *runner
	child     *child
	lease     lease.Lease
	done      <-chan struct{} // the lease's own loss, pushed (nil: never)
	holder    string
	log       *slog.Logger
	keeper    *renew.Keeper // nil: no keeper (its config was refused)
	stop      *stopper
	poll      *time.Ticker
	timeLimit time.Time               // when the job is stopped for running too long (zero: never)
	forwarded map[syscall.Signal]bool // terminating signals passed on to the job
	status    lease.Result            // the child's, once exited
	exited    bool                    // the child exited (reaped)
	emptying  bool                    // the child exited; its strays are being ended
	loss      error                   // why the lease was lost, once it was
	timedOut  bool                    // the job ran past its time limit
}

func (r *runner) loop(a *acquired, k *renew.Keeper, limit time.Time, log *slog.Logger) *loop {
	l := &loop{r: r, child: a.child, lease: a.lease, done: a.lease.Done(), holder: a.lease.Holder(), log: log, keeper: k, timeLimit: limit, forwarded: map[syscall.Signal]bool{}}
	if a.forwarded != 0 {
		l.forwarded[a.forwarded] = true
	}
	killBy := func() time.Time { return time.Time{} } // no keeper: no lease deadline
	if k != nil {
		killBy = k.KillBy
	}
	l.stop = newStopper(a.child.form, r.cfg.stopSignal(), r.cfg.KillGrace, killBy)
	return l
}

// reap collects the child's end, stops its job's rest and says if it is over.
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
	left := ch.form.members()
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
		// A warning only when leasewrap is not stopping the job itself.
		say := l.log.Warn
		if l.loss != nil || l.timedOut || l.stop.stopping || l.stop.killed {
			say = l.log.Debug
		}
		say("child exited with processes of its job still running; stopping them before settling the lease",
			"count", len(left), "first", fmt.Sprint(firstMembers(left)), "how", how, "job", ch.form.String())
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

// lossCause is why the kind's Done channel closed.
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

// expired is a loss found at the kill deadline, before the keeper's fence.
func (l *loop) expired() error {
	return fmt.Errorf("%w: %w", lease.ErrLost, &renew.FenceError{Late: time.Since(l.keeper.Fence())})
}

// timeOut stops a job past its time limit as on a loss.
func (l *loop) timeOut() {
	if l.exited {
		return
	}
	l.timedOut = true
	l.log.Warn("command ran past --timeout; stopping the job", "timeout", l.r.cfg.Timeout, "signal", unix.SignalName(l.stop.sig), "kill_grace", l.r.cfg.KillGrace)
	l.stop.stop(l.timeLimit, false)
}

// forwardedEnd is the forwarded signal the child died of (or exited 128+N for).
func (l *loop) forwardedEnd(st lease.Result) syscall.Signal {
	if st.Signal != 0 && l.forwarded[st.Signal] {
		return st.Signal
	}
	if n := st.ExitCode - 128; st.Signal == 0 && n > 0 && n < 65 && l.forwarded[syscall.Signal(n)] {
		return syscall.Signal(n)
	}
	return 0
}

// maxLoggedMembers bounds the members a log line lists.
const maxLoggedMembers = 5

func firstMembers(m []member) []member { return m[:min(len(m), maxLoggedMembers)] }
