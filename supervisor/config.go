package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/renew"
)

// AnchorMode is kept for compatibility: every mode starts an anchored
// kind's child behind the exec gate.
type AnchorMode string

// The anchor modes, all of which now mean the exec gate.
const (
	AnchorAuto   AnchorMode = "auto"
	AnchorPtrace AnchorMode = "ptrace" // Deprecated: the exec gate is used.
	AnchorGate   AnchorMode = "gate"
)

// Config describes one supervised run. It is plain data: Run never
// changes it, and the running state belongs to Run alone.
type Config struct {
	// Locker takes the lease.
	Locker lease.Locker
	// Argv is the command to run; Argv[0] is looked up in PATH.
	Argv []string
	// Env is the child's base environment; nil means os.Environ().
	Env []string
	// Dir is the child's working directory; "" means leasewrap's.
	Dir string
	// Stdin, Stdout and Stderr of the child; nil means leasewrap's own.
	Stdin, Stdout, Stderr *os.File

	// Wait is how long to keep trying to acquire a held lease; 0 tries once.
	Wait time.Duration
	// Splay, if positive, delays the first attempt by SplayOffset(host, kind,
	// key, Splay), outside Wait; a terminating signal during it aborts the run.
	Splay time.Duration
	// SplayHost replaces the host name in the splay's offset.
	SplayHost string
	// KillGrace is the time from the stop signal to SIGKILL when the job must
	// be stopped; zero means SIGKILL at once. With a TTL, SIGKILL comes no later
	// than the fence.
	KillGrace time.Duration
	// Timeout, if positive, limits how long the command runs (from its start):
	// then the job is stopped as on a loss, the lease settled normally, and the
	// outcome is TimedOut.
	Timeout time.Duration
	// StopSignal asks the job to stop when leasewrap stops it; 0 is SIGTERM.
	StopSignal syscall.Signal
	// RenewPeriod is the renewal period of a TTL lease (0 = TTL/3), and the
	// check period of a lease without TTL (0 = 5 s).
	RenewPeriod time.Duration
	// FinishTimeout bounds settling the lease (0 is 30 s; after a loss, also
	// the lease's expiry); a Finish still running then is abandoned.
	FinishTimeout time.Duration
	// Anchor is accepted for compatibility and changes nothing.
	Anchor AnchorMode
	// Subreaper makes leasewrap reap orphaned descendants (like tini); implied
	// for PID 1. Without it only its own child is reaped, so an embedding
	// program keeps its other children's statuses.
	Subreaper bool
	// LeaveStrays settles the lease as soon as the child exits, leaving the
	// rest of its job alone; by default the lease is settled once the job is
	// empty, its leftovers stopped.
	LeaveStrays bool
	// Job chooses what holds the job together (JobAuto when empty).
	Job JobMode
	// Pre, if set, runs first under its own lease, supervised like the main
	// command; only if it exits 0 does the main command run, under the lease
	// Pre.Handover makes of Pre's, or else the one Locker acquires.
	Pre *Step
	// OnStart and OnExit are /bin/sh -c hooks with the lease's environment and
	// LEASEWRAP_OUTCOME: OnStart once the lease is held, before the command;
	// OnExit once the lease was settled. Neither runs for a run that never held
	// the lease. A failing hook is logged only; what it leaves running is
	// killed when it exits, and all of it at HookTimeout (hook.go).
	OnStart, OnExit string
	// HookTimeout bounds each hook; 0 is no limit (as Timeout's 0).
	HookTimeout time.Duration
	// ExitCode, if set, is the status leasewrap exits with for a run's
	// outcome (LEASEWRAP_EXIT_CODE of the on-exit hook); nil uses
	// Result.ExitCode.
	ExitCode func(Result, error) int
	// Logger receives one line per event that matters; nil discards.
	Logger *slog.Logger
	// OnEvent, if set, gets each Event synchronously; it must not block and
	// must be safe for concurrent use.
	OnEvent func(Event)
	// ExitAfter says the process exits when Run returns (leasewrap's main): the
	// signal handlers Run installs are left in place, which saves about 0.3 ms
	// a run; a signal after Run returned is then dropped.
	ExitAfter bool

	// HelperExe runs the helper roles (exec gate, job guard) and must call Gate
	// first in main; "" is os.Executable(). A large binary may name a small one.
	HelperExe string

	// cgroupParent, if set, replaces cgroup.Parent (a test seam).
	cgroupParent func() (string, error)
}

// Step is a command that runs under its own lease before the main one.
type Step struct {
	Locker lease.Locker
	Argv   []string
	// Handover, if set, turns the step's lease, once its command exited 0, into
	// the main lease without a gap (a session's maintenance guard becoming its
	// owner registration); it replaces that lease's Finish.
	Handover func(ctx context.Context, step lease.Lease) (lease.Lease, error)
}

const defaultFinishTimeout = 30 * time.Second

// Validate rejects a configuration that cannot work, naming the rule.
func (c Config) Validate() error {
	if c.Locker == nil {
		return errors.New("supervisor: no lease kind configured")
	}
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return errors.New("supervisor: no command to run (give it after --)")
	}
	if c.Pre != nil && (c.Pre.Locker == nil || len(c.Pre.Argv) == 0 || c.Pre.Argv[0] == "") {
		return errors.New("supervisor: a pre-step needs a lease kind and a command")
	}
	if c.Wait < 0 || c.Splay < 0 || c.HookTimeout < 0 || c.KillGrace < 0 || c.RenewPeriod < 0 || c.FinishTimeout < 0 || c.Timeout < 0 {
		return errors.New("supervisor: durations must not be negative")
	}
	if c.StopSignal < 0 || c.StopSignal > 64 || c.StopSignal == syscall.SIGKILL || c.StopSignal == syscall.SIGSTOP {
		return fmt.Errorf("supervisor: stop signal %d cannot be used (a signal 1..64 a job can handle; SIGKILL comes after the kill grace anyway)", int(c.StopSignal))
	}
	if err := c.Job.check(); err != nil {
		return err
	}
	switch c.Anchor {
	case "", AnchorAuto, AnchorPtrace, AnchorGate:
	default:
		return fmt.Errorf("supervisor: unknown anchor mode %q (want auto, ptrace or gate)", c.Anchor)
	}
	return nil
}

// ValidateTiming checks the renewal timing for a lease with the given TTL
// (0 = no TTL): kill grace and renew period must be shorter than the TTL,
// with room for a retry before the fencing deadline.
func (c Config) ValidateTiming(ttl time.Duration) error {
	return c.renewConfig(ttl, func(context.Context) error { return nil }).Validate()
}

// stopSignal is the signal that asks the job to stop.
func (c Config) stopSignal() syscall.Signal {
	if c.StopSignal == 0 {
		return syscall.SIGTERM
	}
	return c.StopSignal
}

// renewConfig is the keeper configuration for a lease of the given TTL.
func (c Config) renewConfig(ttl time.Duration, renewFn func(context.Context) error) renew.Config {
	return renew.Config{
		TTL:       ttl,
		Period:    c.RenewPeriod,
		Jitter:    renew.DefaultJitter, // 0 would mean none since renew's clock seam
		Grace:     c.KillGrace,
		Logger:    c.Logger,
		Permanent: func(err error) bool { return errors.Is(err, lease.ErrLost) },
		Renew:     renewFn,
	}
}

// checkStartMargin refuses to start a job under ls, taken by an attempt
// that began at at, when less than a renewal period is left before its
// fence: the caller releases it and the run is a conflict (75).
func (c *Config) checkStartMargin(ls lease.Lease, at time.Time) error {
	ttl := ls.TTL()
	if ttl <= 0 {
		return nil
	}
	rc := c.renewConfig(ttl, func(context.Context) error { return nil })
	if rc.Validate() != nil {
		return nil // ValidateTiming reports it
	}
	fence, period := rc.Deadline(at)
	if left := time.Until(fence); left < period {
		return &lateStartError{took: time.Since(at), left: left, period: period}
	}
	return nil
}

// lateStartError is a lease acquired too late to start the job under it:
// a conflict (matches lease.ErrHeld, the conflict exit code), nothing ran.
type lateStartError struct{ took, left, period time.Duration }

func (e *lateStartError) Error() string {
	return fmt.Sprintf("supervisor: the lease was acquired %v after the attempt began, leaving %v before its fencing deadline, less than one renewal period (%v); released, the command did not run (a slow etcd or file system: try again)",
		e.took.Round(time.Millisecond), e.left.Round(time.Millisecond), e.period)
}

func (e *lateStartError) Is(target error) bool { return target == lease.ErrHeld }
