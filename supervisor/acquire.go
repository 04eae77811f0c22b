package supervisor

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"syscall"
	"time"

	"github.com/oklog/run"

	"github.com/leasewrap/leasewrap/inherit"
	"github.com/leasewrap/leasewrap/internal/fault"
	"github.com/leasewrap/leasewrap/lease"
)

// SignalAbort reports that leasewrap was asked to stop (by Signal) before
// the child started: nothing was left behind, exit 128+N.
type SignalAbort struct{ Signal syscall.Signal }

func (e *SignalAbort) Error() string {
	return fmt.Sprintf("supervisor: %v while acquiring; nothing was started", e.Signal)
}

// isAbortSignal tells the signals that stop an acquisition in progress.
// The other forwarded signals (WINCH, USR1, USR2) only matter to a running
// child: received while waiting, they are dropped.
func isAbortSignal(s os.Signal) bool {
	switch s {
	case syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT:
		return true
	}
	return false
}

// Back-off between attempts while waiting: jittered, doubling, capped. A
// kind's wake-up source usually ends the wait long before it runs out.
const (
	backoffMin = 2 * time.Millisecond
	backoffMax = 250 * time.Millisecond
)

// acquired is the outcome of the acquisition phase: a held lease and a
// child running under it.
type acquired struct {
	lease lease.Lease
	child *child
	at    time.Time // monotonic start of the attempt that took the lease
}

// acquire takes j's lease, waiting up to c.Wait, and starts j's command
// under it. It is an oklog/run group of two actors: the attempt loop and a
// watcher of the run's signal channel (the same channel the forwarder
// reads later, so no signal is delivered twice).
func (c *Config) acquire(ctx context.Context, j *job, sigs <-chan os.Signal) (*acquired, error) {
	var got *acquired
	var g run.Group
	{
		ctx, cancel := context.WithCancel(ctx)
		g.Add(func() error {
			a, err := c.attemptLoop(ctx, j)
			got = a
			return err
		}, func(error) { cancel() })
	}
	{
		ctx, cancel := context.WithCancel(ctx)
		g.Add(func() error {
			for {
				select {
				case s := <-sigs:
					if isAbortSignal(s) {
						return &SignalAbort{Signal: s.(syscall.Signal)}
					}
					c.Logger.Debug("signal while acquiring; no child to pass it to, dropped", "signal", s)
				case <-ctx.Done():
					return nil
				}
			}
		}, func(error) { cancel() })
	}
	err := g.Run()
	var abort *SignalAbort
	if errors.As(err, &abort) && got != nil {
		// The signal raced the start: the job is already running under
		// the lease, so it is the job's to handle.
		got.child.signal(abort.Signal)
		return got, nil
	}
	if got == nil && err == nil {
		err = errors.New("supervisor: acquisition ended without a lease")
	}
	return got, err
}

// attemptLoop tries to take the lease until it succeeds, fails for good,
// the wait runs out or ctx ends. A kind with a queue waits in it; any
// other kind is retried here, woken by its Notifier if it has one.
func (c *Config) attemptLoop(ctx context.Context, j *job) (*acquired, error) {
	if q, ok := j.locker.(lease.Queuer); ok && c.Wait > 0 {
		return c.queued(ctx, j, q)
	}
	deadline := time.Now().Add(c.Wait)
	var w lease.Wake
	if n, ok := j.locker.(lease.Notifier); ok && c.Wait > 0 {
		var err error
		if w, err = n.Notify(ctx); err != nil {
			return nil, err
		}
		defer w.Close()
	}
	backoff := backoffMin
	for attempt := 1; ; attempt++ {
		a, err := c.attempt(ctx, j)
		if err == nil {
			return a, nil
		}
		if !errors.Is(err, lease.ErrHeld) || c.Wait == 0 {
			return nil, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("%w (%v): %w", ErrWaitTimeout, c.Wait, err)
		}
		if attempt == 1 {
			c.Logger.Info("lease held; waiting", "kind", j.locker.Kind(), "key", j.locker.Key(), "wait", c.Wait, "reason", err.Error())
		}
		sleep := min(backoff/2+time.Duration(rand.Int64N(int64(backoff))), left)
		c.Logger.Debug("lease still held; retrying", "attempt", attempt, "max_sleep", sleep)
		woke := false
		if w != nil {
			woke, err = w.Wait(ctx, err, sleep)
		} else {
			err = sleepCtx(ctx, sleep)
		}
		if err != nil {
			return nil, err
		}
		if woke {
			backoff = backoffMin // a real change: the next one may be soon too
		} else {
			backoff = min(backoff*2, backoffMax)
		}
	}
}

// queued waits in the kind's own queue until c.Wait runs out.
func (c *Config) queued(ctx context.Context, j *job, q lease.Queuer) (*acquired, error) {
	qctx, cancel := context.WithTimeout(ctx, c.Wait)
	defer cancel()
	ls, err := q.AcquireWait(qctx)
	if err != nil {
		if ctx.Err() == nil && (errors.Is(err, lease.ErrHeld) || errors.Is(err, context.DeadlineExceeded)) {
			return nil, fmt.Errorf("%w (%v): %w", ErrWaitTimeout, c.Wait, err)
		}
		return nil, err
	}
	// The wait may have lasted longer than the TTL (the kind kept its
	// lease alive meanwhile): the fence must count from a renewal whose
	// start we know, so renew once now, before the command starts.
	at := time.Now()
	if ls.TTL() > 0 {
		if err := ls.Renew(ctx); err != nil {
			c.undo(j, ls, err)
			return nil, fmt.Errorf("%w: lease granted after the wait but not renewable (%v); the command did not run", lease.ErrHeld, err)
		}
	}
	return c.startUnder(j, ls, at)
}

// attempt makes one acquisition attempt and, on success, starts the child.
func (c *Config) attempt(ctx context.Context, j *job) (*acquired, error) {
	an, anchored := j.locker.(lease.Anchored)
	if !anchored {
		at := time.Now()
		ls, err := j.locker.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		return c.startUnder(j, ls, at)
	}

	if p, ok := j.locker.(lease.Prober); ok {
		// Visibly held: no stopped child to start and kill.
		if err := p.Probe(ctx); err != nil {
			return nil, err
		}
	}
	unlock := lockThread()
	defer unlock()
	h := inherit.Handover{Kind: j.locker.Kind(), Key: j.locker.Key(), Holder: j.locker.Holder()}
	ch, err := c.startStopped(j, h)
	if err != nil {
		return nil, err
	}
	fault.Point("supervisor.after-start-before-anchor")
	at := time.Now()
	ls, err := an.AcquireAnchored(ctx, ch.pid)
	if err != nil {
		ch.kill()
		return nil, err
	}
	fault.Point("supervisor.after-anchor-before-release")
	_, hasFile := ls.(lease.FileHolder)
	_, ephemeral := ls.(lease.Ephemeral)
	if len(ls.Env()) > 0 || hasFile || ephemeral {
		// Anchored kinds hand over nothing but the environment the child
		// already has; a kind that breaks this would be silently wrong.
		ch.kill()
		c.undo(j, ls, nil)
		return nil, fmt.Errorf("supervisor: anchored kind %q returned a descriptor, environment or ephemeral lease", j.locker.Kind())
	}
	if err := c.ValidateTiming(ls.TTL()); err != nil {
		// The kind chose a TTL the timing cannot keep: the command never runs.
		ch.kill()
		c.undo(j, ls, err)
		return nil, err
	}
	if ch.traced && tracedPdeathsig {
		if err := clearPdeathsig(ch.pid); err != nil {
			// Still safe: the command then dies with leasewrap, which
			// ends its claim too.
			c.Logger.Warn("could not clear the command's parent-death signal; it will not outlive leasewrap", "pid", ch.pid, "err", err)
		}
	}
	if err := ch.release(); err != nil {
		ch.kill()
		c.undo(j, ls, err)
		return nil, err
	}
	ch.pidOnly = ls.TTL() == 0
	return &acquired{lease: ls, child: ch, at: at}, nil
}

// startUnder starts j's command running under ls, a lease taken before the
// child exists (at: the monotonic start of the attempt that took it). The
// lease is settled as never run if the command cannot start.
func (c *Config) startUnder(j *job, ls lease.Lease, at time.Time) (*acquired, error) {
	fault.Point("supervisor.after-acquire-before-start")
	if err := c.ValidateTiming(ls.TTL()); err != nil {
		c.undo(j, ls, err)
		return nil, err
	}
	if err := c.checkStartMargin(ls, at); err != nil {
		c.undo(j, ls, err)
		return nil, err
	}
	// A kind may name its holder only once acquired (a run id).
	h := inherit.Handover{Kind: j.locker.Kind(), Key: j.locker.Key(), Holder: j.locker.Holder(), Env: ls.Env()}
	if f, ok := ls.(lease.FileHolder); ok {
		h.File = f.File()
	}
	cmd := c.prepare(j, h)
	var ch *child
	var err error
	if _, ok := ls.(lease.Ephemeral); ok {
		var exe string
		if exe, err = c.helperExe("job guard"); err == nil {
			ch, err = startTethered(cmd, exe)
		}
	} else {
		ch, err = startPlain(cmd)
	}
	if err != nil {
		c.undo(j, ls, err)
		return nil, err
	}
	return &acquired{lease: ls, child: ch, at: at}, nil
}

// startStopped starts the command stopped before its first instruction,
// by ptrace or through the exec gate as c.Anchor says. Each try builds a
// fresh exec.Cmd: a refused ptrace start leaves its Cmd used up.
func (c *Config) startStopped(j *job, h inherit.Handover) (*child, error) {
	cmd := c.prepare(j, h)
	mode := c.Anchor
	if mode == AnchorAuto && !mayTrace(cmd.Path) {
		mode = AnchorGate
	}
	if mode != AnchorGate {
		ch, err := startTraced(cmd)
		if err == nil || mode == AnchorPtrace || !errors.Is(err, errPtraceRefused) {
			return ch, err
		}
		c.Logger.Debug("ptrace refused; using the exec gate", "err", err)
		cmd = c.prepare(j, h)
	}
	exe, err := c.helperExe("exec gate")
	if err != nil {
		return nil, err
	}
	return startGated(cmd, exe)
}

// undo settles a lease that was taken but whose child never ran.
func (c *Config) undo(j *job, ls lease.Lease, cause error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.FinishTimeout)
	defer cancel()
	if err := ls.Finish(ctx, lease.Result{ExitCode: -1, Lost: true}); err != nil {
		c.Logger.Error("could not release a lease whose command never started", "key", j.locker.Key(), "err", err, "cause", cause)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
