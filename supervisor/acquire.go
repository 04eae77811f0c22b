package supervisor

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
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

// abortSignals stop an acquisition in progress. Other forwarded signals
// (WINCH, USR1, USR2) are ignored until there is a child to forward them to.
var abortSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT}

// Back-off between attempts while waiting: jittered, doubling, capped. A
// watched directory usually ends the wait long before it runs out.
const (
	backoffMin = 2 * time.Millisecond
	backoffMax = 250 * time.Millisecond
)

// acquired is the outcome of the acquisition phase: a held lease and a
// child running under it.
type acquired struct {
	lease lease.Lease
	child *child
	at    time.Time // monotonic time the lease was taken
}

// acquire takes the lease, waiting up to c.Wait, and starts the child under
// it. It is an oklog/run group of two actors: the attempt loop and a
// watcher of abort signals.
func (c *Config) acquire(ctx context.Context) (*acquired, error) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, abortSignals...)
	defer signal.Stop(sigs)

	var got *acquired
	var g run.Group
	{
		ctx, cancel := context.WithCancel(ctx)
		g.Add(func() error {
			a, err := c.attemptLoop(ctx)
			got = a
			return err
		}, func(error) { cancel() })
	}
	{
		ctx, cancel := context.WithCancel(ctx)
		g.Add(func() error {
			select {
			case s := <-sigs:
				return &SignalAbort{Signal: s.(syscall.Signal)}
			case <-ctx.Done():
				return nil
			}
		}, func(error) { cancel() })
	}
	err := g.Run()
	var abort *SignalAbort
	if errors.As(err, &abort) && got != nil {
		// The signal raced the start: the child is already running under
		// the lease, so it is the child's to handle.
		got.child.cmd.Process.Signal(abort.Signal)
		return got, nil
	}
	if got == nil && err == nil {
		err = errors.New("supervisor: acquisition ended without a lease")
	}
	return got, err
}

// attemptLoop tries to take the lease until it succeeds, fails for good,
// the wait runs out or ctx ends.
func (c *Config) attemptLoop(ctx context.Context) (*acquired, error) {
	var deadline time.Time
	if c.Wait > 0 {
		deadline = time.Now().Add(c.Wait)
	}
	var w *lease.Watcher
	if c.Wait > 0 {
		var err error
		if w, err = lease.NewWatcher(c.Locker.Watches()); err != nil {
			return nil, err
		}
		defer w.Close()
	}
	backoff := backoffMin
	for attempt := 1; ; attempt++ {
		a, err := c.attempt(ctx)
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
			c.Logger.Info("lease held; waiting", "kind", c.Locker.Kind(), "key", c.Locker.Key(), "wait", c.Wait, "reason", err.Error())
		}
		var held *lease.HeldError
		if errors.As(err, &held) && c.localHolder(held) {
			w.WatchPID(held.PID) // its exit may free the lease
		}
		sleep := min(backoff/2+time.Duration(rand.Int64N(int64(backoff))), left)
		c.Logger.Debug("lease still held; retrying", "attempt", attempt, "max_sleep", sleep)
		woke, err := w.Wait(ctx, sleep)
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

// localHolder reports whether a holder's pid names a process on this host
// (the kind said no host, or ours).
func (c *Config) localHolder(h *lease.HeldError) bool {
	if h.PID <= 0 {
		return false
	}
	if h.Host == "" {
		return true
	}
	host, err := os.Hostname()
	return err == nil && host == h.Host
}

// attempt makes one acquisition attempt and, on success, starts the child.
func (c *Config) attempt(ctx context.Context) (*acquired, error) {
	l := c.Locker
	h := inherit.Handover{Kind: l.Kind(), Key: l.Key(), Holder: l.Holder()}
	if !l.Anchored() {
		ls, err := l.Acquire(ctx, 0)
		if err != nil {
			return nil, err
		}
		fault.Point("supervisor.after-acquire-before-start")
		at := time.Now()
		if err := c.ValidateTiming(ls.TTL()); err != nil {
			c.undo(ls, err)
			return nil, err
		}
		// A kind may name its holder only once acquired (a run id).
		h.Holder, h.File, h.Env = l.Holder(), ls.File(), ls.Env()
		ch, err := startPlain(c.prepare(h))
		if err != nil {
			c.undo(ls, err)
			return nil, err
		}
		return &acquired{lease: ls, child: ch, at: at}, nil
	}

	if p, ok := l.(lease.Prober); ok {
		// Visibly held: no stopped child to start and kill.
		if err := p.Probe(ctx); err != nil {
			return nil, err
		}
	}
	unlock := lockThread()
	defer unlock()
	ch, err := c.startStopped(h)
	if err != nil {
		return nil, err
	}
	fault.Point("supervisor.after-start-before-anchor")
	ls, err := l.Acquire(ctx, ch.pid)
	if err != nil {
		ch.kill()
		return nil, err
	}
	fault.Point("supervisor.after-anchor-before-release")
	at := time.Now()
	if env := ls.Env(); len(env) > 0 || ls.File() != nil {
		// Anchored kinds hand over nothing but the environment the child
		// already has; a kind that breaks this would be silently wrong.
		ch.kill()
		c.undo(ls, nil)
		return nil, fmt.Errorf("supervisor: anchored kind %q returned a descriptor or environment", l.Kind())
	}
	if err := c.ValidateTiming(ls.TTL()); err != nil {
		// The kind chose a TTL the timing cannot keep: the command never runs.
		ch.kill()
		c.undo(ls, err)
		return nil, err
	}
	if err := ch.release(); err != nil {
		ch.kill()
		c.undo(ls, err)
		return nil, err
	}
	return &acquired{lease: ls, child: ch, at: at}, nil
}

// startStopped starts the command stopped before its first instruction,
// by ptrace or through the exec gate as c.Anchor says. Each try builds a
// fresh exec.Cmd: a refused ptrace start leaves its Cmd used up.
func (c *Config) startStopped(h inherit.Handover) (*child, error) {
	cmd := c.prepare(h)
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
		cmd = c.prepare(h)
	}
	exe := c.gateExe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("supervisor: find leasewrap's own executable for the exec gate: %w", err)
		}
	}
	return startGated(cmd, exe)
}

// undo settles a lease that was taken but whose child never ran.
func (c *Config) undo(ls lease.Lease, cause error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.FinishTimeout)
	defer cancel()
	if err := ls.Finish(ctx, lease.Result{ExitCode: -1, Lost: true}); err != nil {
		c.Logger.Error("could not release a lease whose command never started", "key", c.Locker.Key(), "err", err, "cause", cause)
	}
}
