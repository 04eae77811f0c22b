package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/oklog/run"
	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/fault"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/renew"
)

// forwardedSignals are passed on to the job (the child's process group)
// while it runs. SIGTSTP and SIGCONT included: job control stops and
// continues the whole job.
var forwardedSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH, syscall.SIGTSTP, syscall.SIGCONT}

// errChildDone is the reaper actor's return: the job is over.
var errChildDone = errors.New("supervisor: child exited")

// PreStepError reports a pre-step (Config.Pre) that did not succeed:
// nothing was registered and the main command did not run; leasewrap
// exits with Code (the pre-step's status).
type PreStepError struct {
	Code int
	Argv []string
}

func (e *PreStepError) Error() string {
	return fmt.Sprintf("pre-step %q exited with status %d; the command did not run", e.Argv, e.Code)
}

// ExitCode is the pre-step's status.
func (e *PreStepError) ExitCode() int { return e.Code }

// Run runs cfg.Argv under the lease cfg.Locker takes. It returns:
//   - *ChildExit once the child ran and exited and the lease was settled;
//   - an error matching lease.ErrLost if the lease was lost while the job
//     ran (the job was stopped), or could not be proven ours past its
//     fencing deadline;
//   - an error matching lease.ErrHeld, or ErrWaitTimeout, if the lease was
//     not acquired (the command never ran);
//   - *lease.ReplayError if the work was already done (nothing ran);
//   - *SignalAbort if a signal stopped the wait (nothing ran);
//   - *PreStepError if the pre-step failed (the command never ran);
//   - any other error for usage, I/O or internal failures.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	c := cfg.withDefaults()
	main := &job{locker: c.Locker, argv: c.Argv}
	if err := main.resolve(c.Dir, c.Env); err != nil {
		return err
	}
	var pre *job
	if c.Pre != nil {
		pre = &job{locker: c.Pre.Locker, argv: c.Pre.Argv}
		if err := pre.resolve(c.Dir, c.Env); err != nil {
			return err
		}
	}
	c.foreground = foregroundTTY(c.Stdin)
	var err error
	if main.hold, err = c.holdJob(c.Logger); err != nil {
		return err
	}
	defer main.hold.close(c.Logger)
	if pre != nil {
		if pre.hold, err = c.holdJob(c.Logger); err != nil {
			return err
		}
		defer pre.hold.close(c.Logger)
	}
	if main.hold.joined {
		c.foreground = false // the terminal stays with the outer job's group
	}
	if c.Subreaper {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("supervisor: become a subreaper: %w", err)
		}
	}
	// One channel for every signal of the run, from here on: acquisition
	// reads it (abort or drop), supervision forwards from it, so none is
	// lost in between and none is delivered twice.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...)
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	if !c.ExitAfter {
		defer signal.Stop(sigs)
		defer signal.Stop(chld)
	}

	var a *acquired
	if pre == nil {
		var err error
		if a, err = c.acquire(ctx, main, sigs); err != nil {
			return err
		}
	} else {
		var err error
		if a, err = c.runPre(ctx, pre, main, sigs, chld); err != nil {
			return err
		}
	}
	return c.runJob(ctx, main, a, sigs, chld)
}

// runPre runs the pre-step to its end under its own lease, then obtains
// the main lease (handed over without a gap when the pre-step's lease is a
// lease.Successor) and starts the main command under it.
func (c *Config) runPre(ctx context.Context, pre, main *job, sigs, chld chan os.Signal) (*acquired, error) {
	pa, err := c.acquire(ctx, pre, sigs)
	if err != nil {
		return nil, err
	}
	log := c.Logger.With("kind", pre.locker.Kind(), "key", pre.locker.Key())
	log.Info("lease acquired; pre-step started", "pid", pa.child.pid, "command", pre.argv)
	res, k, runErr := c.supervise(ctx, pa, sigs, chld, log)
	res.Argv = pre.argv
	if runErr == nil && res.ExitCode == 0 {
		if s, ok := pa.lease.(lease.Successor); ok {
			at := time.Now()
			ls, err := s.Next(ctx)
			if err != nil {
				return nil, err
			}
			log.Info("pre-step done; lease handed over to the command")
			return c.startUnder(main, ls, at)
		}
	}
	if err := c.finish(pa, res, k); err != nil {
		log.Error("could not settle the pre-step's lease", "err", err)
	}
	if runErr != nil {
		return nil, fmt.Errorf("%s %q (pre-step): %w", pre.locker.Kind(), pre.locker.Key(), runErr)
	}
	if res.ExitCode != 0 {
		return nil, &PreStepError{Code: res.ExitCode, Argv: pre.argv}
	}
	return c.acquire(ctx, main, sigs)
}

// runJob supervises the main command until the job is over and settles
// its lease.
func (c *Config) runJob(ctx context.Context, j *job, a *acquired, sigs, chld chan os.Signal) error {
	log := c.Logger.With("kind", j.locker.Kind(), "key", j.locker.Key())
	log.Info("lease acquired; child started", "holder", j.locker.Holder(), "pid", a.child.pid, "ttl", a.lease.TTL())
	if s, ok := a.lease.(lease.Starter); ok {
		s.Started(ctx)
	}
	started := time.Now()
	res, k, runErr := c.supervise(ctx, a, sigs, chld, log)
	res.Started, res.Finished, res.Argv = started, time.Now(), j.argv
	finErr := c.finish(a, res, k)
	switch {
	case runErr != nil:
		log.Error("lease lost; job stopped", "err", runErr, "child_status", res.ExitCode)
		if finErr != nil {
			log.Warn("could not settle the lost lease", "err", finErr)
		}
		return fmt.Errorf("%s %q: %w", j.locker.Kind(), j.locker.Key(), runErr)
	case finErr != nil && errors.Is(finErr, lease.ErrLost):
		log.Error("child exited, but the lease was past its fencing deadline and is no longer ours", "status", res.ExitCode, "err", finErr)
		return fmt.Errorf("%s %q: %w", j.locker.Kind(), j.locker.Key(), finErr)
	case finErr != nil:
		log.Error("child exited but the lease could not be settled", "status", res.ExitCode, "err", finErr)
		return fmt.Errorf("settle %s %q after the child exited with %d: %w", j.locker.Kind(), j.locker.Key(), res.ExitCode, finErr)
	}
	log.Info("child exited; lease settled", "status", res.ExitCode, "duration", res.Finished.Sub(started).Round(time.Millisecond))
	return &ChildExit{Code: res.ExitCode}
}

// finish settles a lease whose job is over, under a fresh context.
func (c *Config) finish(a *acquired, res lease.Result, k *renew.Keeper) error {
	if c.Subreaper {
		reapOrphans()
	}
	if k != nil {
		res.Fence = k.Fence()
		res.PastFence = !res.Lost && k.PastFence()
	}
	fctx, cancel := context.WithTimeout(context.Background(), c.FinishTimeout)
	defer cancel()
	fault.Point("supervisor.before-finish")
	return a.lease.Finish(fctx, res)
}

// supervise runs the actors of the supervision phase until the job is
// over: the child exited and nothing of its process group is left (unless
// LeaveStrays). runErr is non-nil (matching lease.ErrLost) when the lease
// was lost and the job stopped because of it.
func (c *Config) supervise(ctx context.Context, a *acquired, sigs, chld <-chan os.Signal, log *slog.Logger) (res lease.Result, k *renew.Keeper, runErr error) {
	k, err := renew.New(c.renewConfig(a.lease.TTL(), a.lease), a.at)
	if err != nil {
		// Checked before the child started (ValidateTiming): unreachable
		// unless a kind changes its TTL.
		a.child.hold.killAll()
		res = reap(a.child, chld, c.Subreaper, nil, nil)
		return res, nil, err
	}
	defer func() {
		if a.child.tether != nil {
			a.child.tether.done()
		}
	}()
	var g run.Group
	var mu sync.Mutex
	var lost bool
	setLost := func() { mu.Lock(); lost = true; mu.Unlock() }
	{ // Reaper: returns when the job is over; interrupted = stop the job.
		stop := &stopper{child: a.child, grace: c.KillGrace}
		g.Add(func() error {
			res = reap(a.child, chld, c.Subreaper, func() { c.stopForShell(a.child, c.Stdin) }, nil)
			mu.Lock()
			wasLost := lost
			mu.Unlock()
			if !c.LeaveStrays || wasLost {
				c.endJob(a.child, wasLost, log)
			}
			stop.finish()
			return errChildDone
		}, func(error) { stop.start() })
	}
	{ // Forwarder: passes signals on to the job.
		ctx, cancel := context.WithCancel(ctx)
		g.Add(func() error {
			for {
				select {
				case s := <-sigs:
					if err := a.child.signal(s); err != nil && !errors.Is(err, unix.ESRCH) {
						log.Warn("could not forward signal", "signal", s, "err", err)
					}
				case <-ctx.Done():
					return nil
				}
			}
		}, func(error) { cancel() })
	}
	{ // Renewer: keeps the lease; returns an error when it is lost.
		ctx, cancel := context.WithCancel(ctx)
		g.Add(func() error {
			err := k.Run(ctx)
			if err == nil {
				<-ctx.Done() // cancelled: wait for the interrupt like the others
				return nil
			}
			if errors.Is(err, renew.ErrFenced) && a.child.exited() {
				// The child ended on its own before the fence was noticed
				// (leasewrap was frozen): Finish decides, PastFence set.
				log.Warn("fencing deadline passed after the child exited; settling only if the lease is still ours")
				<-ctx.Done()
				return nil
			}
			setLost()
			if errors.Is(err, renew.ErrFenced) {
				return fmt.Errorf("%w: %w", lease.ErrLost, err)
			}
			return err
		}, func(error) { cancel() })
	}
	if ln, ok := a.lease.(lease.LossNotifier); ok && ln.Lost() != nil {
		// Loss pushed by the kind: at once, not at the next renewal.
		ctx, cancel := context.WithCancel(ctx)
		g.Add(func() error {
			select {
			case <-ln.Lost():
				setLost()
				return fmt.Errorf("%w: the lease's record was removed or revoked", lease.ErrLost)
			case <-ctx.Done():
				return nil
			}
		}, func(error) { cancel() })
	}
	err = g.Run()
	if lost {
		res.Lost = true
		return res, k, err
	}
	return res, k, nil
}

// endJob empties the job once its child has exited, and
// names what it had to stop. The remainder of a pid-only lease (the lease
// already ended with the child's pid) and of a lost lease is killed at
// once; otherwise it gets SIGTERM, then SIGKILL after the kill grace.
func (c *Config) endJob(ch *child, lost bool, log *slog.Logger) {
	kill := ch.pidOnly || lost
	if left := ch.hold.end(c.KillGrace, kill, c.Subreaper); len(left) > 0 {
		how := "SIGTERM, then SIGKILL after the kill grace"
		if kill {
			how = "SIGKILL"
		}
		log.Warn("child exited with processes of its job still running; stopped them before settling the lease",
			"stopped", fmt.Sprint(left), "how", how, "job", ch.hold.String())
	}
}

// stopper stops the job after the lease was lost: SIGTERM to every member
// at once, SIGKILL after the grace (cgroup.kill in the cgroup form),
// whether or not the child itself has exited by then. start is idempotent.
type stopper struct {
	child *child
	grace time.Duration
	once  sync.Once
	mu    sync.Mutex
	timer *time.Timer
}

func (s *stopper) start() {
	s.once.Do(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.child.hold.signalAll(syscall.SIGTERM)
		s.child.hold.signalAll(syscall.SIGCONT)
		s.timer = time.AfterFunc(s.grace, s.child.hold.killAll)
	})
}

// finish is called once the job is over (its group empty): no signal may
// reach a group id that could be reused.
func (s *stopper) finish() {
	s.once.Do(func() {}) // a later start does nothing
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		s.timer.Stop()
	}
}
