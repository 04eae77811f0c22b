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

// forwardedSignals are passed on to the child while it runs.
var forwardedSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH}

// errChildDone is the reaper actor's return: the child exited.
var errChildDone = errors.New("supervisor: child exited")

// Run runs cfg.Argv under the lease cfg.Locker takes. It returns:
//   - *ChildExit once the child ran and exited and the lease was settled;
//   - an error matching lease.ErrLost if the lease was lost while the child
//     ran (the child was stopped);
//   - an error matching lease.ErrHeld, or ErrWaitTimeout, if the lease was
//     not acquired (the command never ran);
//   - *lease.ReplayError if the work was already done (nothing ran);
//   - *SignalAbort if a signal stopped the wait (nothing ran);
//   - any other error for usage, I/O or internal failures.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	c := cfg.withDefaults()
	if err := c.lookPath(); err != nil {
		return err
	}
	c.foreground = foregroundTTY(c.Stdin)
	if c.Subreaper {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("supervisor: become a subreaper: %w", err)
		}
	}
	// Forwarded signals are caught from here on, so none is lost between
	// the end of acquisition and the start of forwarding.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...)
	defer signal.Stop(sigs)
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	defer signal.Stop(chld)

	a, err := c.acquire(ctx)
	if err != nil {
		return err
	}
	log := c.Logger.With("kind", c.Locker.Kind(), "key", c.Locker.Key())
	log.Info("lease acquired; child started", "holder", c.Locker.Holder(), "pid", a.child.pid, "ttl", a.lease.TTL())
	if s, ok := a.lease.(lease.Starter); ok {
		s.Started(ctx)
	}

	started := time.Now()
	res, runErr := c.supervise(ctx, a, sigs, chld, log)
	res.Started, res.Finished, res.Argv = started, time.Now(), c.Argv

	if c.Subreaper {
		reapOrphans()
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.FinishTimeout)
	defer cancel()
	fault.Point("supervisor.before-finish")
	finErr := a.lease.Finish(fctx, res)
	switch {
	case runErr != nil:
		log.Error("lease lost; child stopped", "err", runErr, "child_status", res.ExitCode)
		if finErr != nil {
			log.Warn("could not settle the lost lease", "err", finErr)
		}
		return fmt.Errorf("%s %q: %w", c.Locker.Kind(), c.Locker.Key(), runErr)
	case finErr != nil:
		log.Error("child exited but the lease could not be settled", "status", res.ExitCode, "err", finErr)
		return fmt.Errorf("settle %s %q after the child exited with %d: %w", c.Locker.Kind(), c.Locker.Key(), res.ExitCode, finErr)
	}
	log.Info("child exited; lease settled", "status", res.ExitCode, "duration", res.Finished.Sub(started).Round(time.Millisecond))
	return &ChildExit{Code: res.ExitCode}
}

// supervise runs the actors of the supervision phase until the child has
// exited. runErr is non-nil (matching lease.ErrLost) when the lease was
// lost and the child stopped because of it.
func (c *Config) supervise(ctx context.Context, a *acquired, sigs, chld <-chan os.Signal, log *slog.Logger) (res lease.Result, runErr error) {
	var g run.Group
	var lost bool
	{ // Reaper: returns when the child exited; interrupted = stop the child.
		stop := &stopper{child: a.child, grace: c.KillGrace}
		g.Add(func() error {
			res = reap(a.child, chld, stop.done)
			return errChildDone
		}, func(error) { stop.start() })
	}
	{ // Forwarder: passes signals on to the child.
		ctx, cancel := context.WithCancel(ctx)
		g.Add(func() error {
			for {
				select {
				case s := <-sigs:
					if err := a.child.cmd.Process.Signal(s); err != nil && !errors.Is(err, os.ErrProcessDone) {
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
		rc := c.renewConfig(a.lease.TTL(), a.lease)
		g.Add(func() error {
			err := renew.Run(ctx, rc, a.at)
			if err == nil {
				<-ctx.Done() // cancelled: wait for the interrupt like the others
				return nil
			}
			lost = true
			if errors.Is(err, renew.ErrFenced) {
				return fmt.Errorf("%w: %w", lease.ErrLost, err)
			}
			return err
		}, func(error) { cancel() })
	}
	err := g.Run()
	if lost {
		res.Lost = true
		return res, err
	}
	return res, nil
}

// stopper stops the child after the lease was lost: SIGTERM to its process
// group at once, SIGKILL after the grace. start is idempotent and does
// nothing once the child has exited.
type stopper struct {
	child  *child
	grace  time.Duration
	once   sync.Once
	mu     sync.Mutex
	exited bool
	timer  *time.Timer
}

func (s *stopper) start() {
	s.once.Do(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.exited {
			return
		}
		unix.Kill(-s.child.pgid, unix.SIGTERM)
		s.timer = time.AfterFunc(s.grace, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !s.exited {
				unix.Kill(-s.child.pgid, unix.SIGKILL)
			}
		})
	})
}

// done marks the child exited, so no signal can reach a recycled pid.
func (s *stopper) done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exited = true
	if s.timer != nil {
		s.timer.Stop()
	}
}
