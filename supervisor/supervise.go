package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/oklog/run"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/renew"
)

// jobEnd is how a supervised job ended.
type jobEnd struct {
	// status is the child's status; status.Forwarded is set when a signal
	// leasewrap passed on ended it. (status.Lost is settle's to set, from
	// loss: "lost" is decided once, here.)
	status lease.Result
	// loss is why the lease was lost (matches lease.ErrLost), or nil.
	loss error
	// timedOut: the job was stopped because it ran past Config.Timeout.
	timedOut bool
	keeper   *renew.Keeper
	lastOK   time.Time // monotonic start of the last successful renewal
}

// supervise runs the job until it is over: the child exited and nothing
// of its job is left (unless LeaveStrays). Two actors: the keeper, which
// renews the lease (its fencing deadline a timer of its own that no
// renewal can postpone) and returns the loss as an error, and the loop,
// which owns the job. The keeper's error interrupts the loop (its context
// ends with the loss as cause); the loop's end interrupts the keeper.
// limit is when the job is stopped for running too long (zero: never).
func (r *runner) supervise(ctx context.Context, a *acquired, limit time.Time, log *slog.Logger) jobEnd {
	end := jobEnd{lastOK: a.at}
	holder := a.lease.Holder()
	if a.child.tether != nil {
		defer a.child.tether.clear() // the job is over: the guard may go (settle reaps it)
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
		end.status, end.loss, end.timedOut = r.loop(a, nil, limit, log).run(ctx)
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
	l := r.loop(a, k, limit, log)
	actor(&g, ctx, func(ctx context.Context) error {
		end.status, end.loss, end.timedOut = l.run(ctx)
		return nil
	})
	g.Run()
	return end
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

// run supervises the job until it is over, the way tini's main loop
// reads: reap, stop when the job is over, else wait for the next thing
// that happens. ctx ending means stop the job: with a cause matching
// lease.ErrLost the lease was lost (returned as loss); otherwise the run
// was cancelled.
func (l *loop) run(ctx context.Context) (status lease.Result, loss error, timedOut bool) {
	defer l.stop.close()
	l.poll = time.NewTicker(reapPoll)
	defer l.poll.Stop()
	stopC, lostC, timeC := ctx.Done(), l.done, l.timeoutC()
	if l.limit != nil {
		defer l.limit.Stop()
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
			// Whether the child had ended on its own is read before the
			// deadline's SIGKILL, which would make it true at once.
			ended := l.exited || l.child.exited()
			if l.stop.due() && !ended {
				l.lose(l.expired())
			}
		}
	}
}
