package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/oklog/run"
	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/cgroup"
	_ "github.com/leasewrap/leasewrap/internal/linuxonly" // on another OS, one build error saying leasewrap is Linux-only
	"github.com/leasewrap/leasewrap/lease"
)

// forwardedSignals are passed on to the job while it runs.
var forwardedSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH, syscall.SIGTSTP, syscall.SIGCONT}

// ForwardedSignals returns a copy of the signals Run passes on to the job.
func ForwardedSignals() []os.Signal { return slices.Clone(forwardedSignals) }

// runner is one run in progress: the defaulted configuration and the state.
type runner struct {
	cfg         Config
	main, pre   *job
	sigs        chan os.Signal // every forwarded signal from the start: none lost
	chld        chan os.Signal // SIGCHLD: wakes the reaper
	foreground  bool           // the child gets the terminal
	waitReport  time.Duration  // how often a waiter says whom it waits for
	splayed     time.Duration
	beforeWatch func() // test seam: runs before each turn of the signal watcher
}

// job is one command and the lease it runs under.
type job struct {
	locker lease.Locker
	argv   []string
	path   string   // argv[0] resolved in PATH
	form   *jobForm // what holds the job together
	guard  *guard   // started while a queued lease was awaited, or nil
}

// acquired is a held lease and a child running under it.
type acquired struct {
	lease     lease.Lease
	child     *child
	at        time.Time      // monotonic start of the attempt that took the lease
	anchored  bool           // taken with lease.Anchor for the child's pid
	forwarded syscall.Signal // a terminating signal passed on before supervision
}

// actor adds fn to g; its interrupt cancels fn's context with the error as cause.
func actor(g *run.Group, ctx context.Context, fn func(context.Context) error) {
	ctx, cancel := context.WithCancelCause(ctx)
	g.Add(func() error { return fn(ctx) }, func(err error) { cancel(err) })
}

// Run runs cfg.Argv under the lease cfg.Locker takes and reports what
// happened; the error is for failures only (a command that cannot run is
// an *ExecError).
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	r := &runner{cfg: withDefaults(cfg), waitReport: waitReportEvery}
	r.main = &job{locker: cfg.Locker, argv: cfg.Argv}
	if err := r.main.resolve(r.cfg.Dir, r.cfg.Env); err != nil {
		return Result{}, err
	}
	if cfg.Pre != nil {
		r.pre = &job{locker: cfg.Pre.Locker, argv: cfg.Pre.Argv}
		if err := r.pre.resolve(r.cfg.Dir, r.cfg.Env); err != nil {
			return Result{}, err
		}
	}
	r.foreground = foregroundTTY(r.cfg.Stdin)
	var err error
	if r.main.form, err = r.cfg.newJobForm(r.cfg.Logger); err != nil {
		return Result{}, err
	}
	defer r.main.form.close(r.cfg.Logger)
	if r.pre != nil {
		if r.pre.form, err = r.cfg.newJobForm(r.cfg.Logger); err != nil {
			return Result{}, err
		}
		defer r.pre.form.close(r.cfg.Logger)
	}
	if r.main.form.joined {
		r.foreground = false // the terminal stays with the outer job's group
	}
	if r.cfg.Subreaper {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return Result{}, fmt.Errorf("supervisor: become a subreaper: %w", err)
		}
	}
	r.sigs = make(chan os.Signal, 8)
	signal.Notify(r.sigs, forwardedSignals...)
	r.chld = make(chan os.Signal, 1)
	signal.Notify(r.chld, syscall.SIGCHLD)
	if !r.cfg.ExitAfter {
		defer signal.Stop(r.sigs)
		defer signal.Stop(r.chld)
	}
	res, err := r.run(ctx)
	res.Splayed = r.splayed
	return res, err
}

// withDefaults fills the zero fields that mean a default.
func withDefaults(c Config) Config {
	if c.FinishTimeout == 0 {
		c.FinishTimeout = defaultFinishTimeout
	}
	if c.cgroupParent == nil {
		c.cgroupParent = cgroup.Parent
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Env == nil {
		c.Env = os.Environ()
	}
	if c.Stdin == nil {
		c.Stdin = os.Stdin
	}
	if c.Stdout == nil {
		c.Stdout = os.Stdout
	}
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	if os.Getpid() == 1 {
		c.Subreaper = true
	}
	return c
}

func (r *runner) run(ctx context.Context) (Result, error) {
	var err error
	if r.splayed, err = r.splay(ctx); err != nil {
		return notAcquired(err)
	}
	start := time.Now()
	var a *acquired
	if r.pre != nil {
		var res Result
		if a, res, err = r.runPre(ctx); a == nil {
			res.Waited = time.Since(start)
			return res, err
		}
	} else if a, err = r.acquire(ctx, r.main); err != nil {
		res, err := notAcquired(err)
		res.Waited = time.Since(start)
		return res, err
	}
	res, err := r.runJob(ctx, r.main, a)
	res.Waited = a.at.Sub(start)
	r.onExit(ctx, r.main, a.lease, res, err)
	return res, err
}

// notAcquired turns an acquisition without a lease into an outcome, or a failure.
func notAcquired(err error) (Result, error) {
	var replay *lease.ReplayError
	var abort *abortError
	switch {
	case errors.As(err, &replay):
		return Result{Outcome: Replayed, ExitCode: replay.ExitCode, Cause: err}, nil
	case errors.As(err, &abort):
		return Result{Outcome: Aborted, Signal: abort.sig, Cause: err}, nil
	case errors.Is(err, lease.ErrHeld), errors.Is(err, ErrWaitTimeout):
		return Result{Outcome: Conflict, Cause: err, Holder: heldBy(err)}, nil
	}
	return Result{}, err
}

// runPre runs the pre-step, then starts the command under the main lease
// (handed over or acquired); without one it returns the outcome instead.
func (r *runner) runPre(ctx context.Context) (*acquired, Result, error) {
	pre, main := r.pre, r.main
	without := func(err error) (*acquired, Result, error) {
		res, err := notAcquired(err)
		return nil, res, err
	}
	pa, err := r.acquire(ctx, pre)
	if err != nil {
		return without(err)
	}
	log := r.cfg.Logger.With("kind", pre.locker.Kind(), "key", pre.locker.Key())
	log.Info("lease acquired; pre-step started", "pid", pa.child.pid, "command", pre.argv)
	end := r.supervise(ctx, pa, time.Time{}, log) // the time limit is the command's
	if end.loss == nil && end.status.ExitCode == 0 && r.cfg.Pre.Handover != nil {
		at := time.Now()
		ls, err := r.cfg.Pre.Handover(ctx, pa.lease)
		if err != nil {
			return without(err)
		}
		if pa.child.guard != nil {
			pa.child.guard.done() // not settled: reap its guard here
		}
		log.Info("pre-step done; lease handed over to the command")
		a, err := r.startUnder(ctx, main, ls, at)
		if err != nil {
			return without(err)
		}
		return a, Result{}, nil
	}
	end.status.Argv = pre.argv
	if err := r.settle(pa, end); err != nil && end.loss == nil {
		log.Error("could not settle the pre-step's lease", "err", err)
	}
	if end.loss != nil {
		return nil, Result{Outcome: Lost, ExitCode: end.status.ExitCode, Signal: end.status.Signal, Holder: pa.lease.Holder(), PID: pa.child.pid,
			Cause: fmt.Errorf("%s %q (pre-step): %w", pre.locker.Kind(), pre.locker.Key(), end.loss)}, nil
	}
	if end.status.ExitCode != 0 {
		return nil, Result{Outcome: PreStepFailed, ExitCode: end.status.ExitCode, Signal: end.status.Signal, PID: pa.child.pid,
			Cause: fmt.Errorf("pre-step %q exited with status %d; the command did not run", pre.argv, end.status.ExitCode)}, nil
	}
	a, err := r.acquire(ctx, main)
	if err != nil {
		return without(err)
	}
	return a, Result{}, nil
}

// runJob supervises the main command and settles its lease.
func (r *runner) runJob(ctx context.Context, j *job, a *acquired) (Result, error) {
	log := r.cfg.Logger.With("kind", j.locker.Kind(), "key", j.locker.Key())
	holder := a.lease.Holder()
	log.Info("lease acquired; child started", "holder", holder, "pid", a.child.pid, "ttl", a.lease.TTL())
	if an, ok := j.locker.(lease.Anchor); ok && a.anchored {
		an.Started(ctx, a.lease)
	}
	started := time.Now()
	var limit time.Time
	if r.cfg.Timeout > 0 {
		limit = started.Add(r.cfg.Timeout)
	}
	end := r.supervise(ctx, a, limit, log)
	end.status.Started, end.status.Finished, end.status.Argv = started, time.Now(), j.argv
	res := Result{Outcome: Ran, ExitCode: end.status.ExitCode, Signal: end.status.Signal, Holder: holder, PID: a.child.pid,
		Runtime: end.status.Finished.Sub(started)}
	finErr := r.settle(a, end)
	switch {
	case end.loss != nil:
		log.Error("lease lost; job stopped", "err", end.loss, "child_status", res.ExitCode)
		if finErr != nil {
			log.Warn("could not settle the lost lease", "err", finErr)
		}
		res.Outcome, res.Cause = Lost, fmt.Errorf("%s %q: %w", j.locker.Kind(), j.locker.Key(), end.loss)
		return res, nil
	case finErr != nil && errors.Is(finErr, lease.ErrLost):
		log.Error("child exited, but the lease was past its fencing deadline and is no longer ours", "status", res.ExitCode, "err", finErr)
		res.Outcome, res.Cause = Lost, fmt.Errorf("%s %q: %w", j.locker.Kind(), j.locker.Key(), finErr)
		return res, nil
	case finErr != nil:
		log.Error("child exited but the lease could not be settled", "status", res.ExitCode, "err", finErr)
		return res, fmt.Errorf("settle %s %q after the child exited with %d: %w", j.locker.Kind(), j.locker.Key(), res.ExitCode, finErr)
	}
	if end.timedOut {
		log.Warn("job stopped after --timeout; lease settled", "status", res.ExitCode, "timeout", r.cfg.Timeout)
		res.Outcome = TimedOut
		res.Cause = fmt.Errorf("%s %q: %w (%v); the job was stopped", j.locker.Kind(), j.locker.Key(), ErrTimeout, r.cfg.Timeout)
		return res, nil
	}
	log.Info("child exited; lease settled", "status", res.ExitCode, "duration", res.Runtime.Round(time.Millisecond))
	return res, nil
}
