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

// Config describes one supervised run; Run never changes it.
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
	// Splay delays the first attempt by SplayOffset, outside Wait.
	Splay time.Duration
	// SplayHost replaces the host name in the splay's offset.
	SplayHost string
	// KillGrace is the time from the stop signal to SIGKILL (0: at once).
	KillGrace time.Duration
	// Timeout, if positive, stops the job that long after its start (TimedOut).
	Timeout time.Duration
	// StopSignal asks the job to stop when leasewrap stops it; 0 is SIGTERM.
	StopSignal syscall.Signal
	// RenewPeriod is the renewal period of a TTL lease (0 = TTL/3), else the
	// check period (0 = 5 s).
	RenewPeriod time.Duration
	// FinishTimeout bounds settling the lease (0 is 30 s); Finish is then abandoned.
	FinishTimeout time.Duration
	// Subreaper makes leasewrap reap orphaned descendants (implied for PID 1).
	Subreaper bool
	// LeaveStrays settles the lease when the child exits, leaving its job's rest alone.
	LeaveStrays bool
	// Job chooses what holds the job together (JobAuto when empty).
	Job JobMode
	// Pre, if set, runs first under its own lease; the command runs if it exits 0.
	Pre *Step
	// OnStart and OnExit are /bin/sh -c hooks run before the command and after
	// the settle, only for a run that held the lease; a failure is only logged.
	OnStart, OnExit string
	// HookTimeout bounds each hook; 0 is no limit (as Timeout's 0).
	HookTimeout time.Duration
	// ExitCode, if set, gives the on-exit hook's LEASEWRAP_EXIT_CODE.
	ExitCode func(Result, error) int
	// Logger receives one line per event that matters; nil discards.
	Logger *slog.Logger
	// OnEvent, if set, gets each Event synchronously; it must not block and
	// must be safe for concurrent use.
	OnEvent func(Event)
	// ExitAfter: the process exits when Run returns, so Run leaves its signal handlers.
	ExitAfter bool
	// HelperExe runs the helper roles and must call Gate first; "" is os.Executable().
	HelperExe string

	// cgroupParent, if set, replaces cgroup.Parent (a test seam).
	cgroupParent func() (string, error)
}

// Step is a command that runs under its own lease before the main one.
type Step struct {
	Locker lease.Locker
	Argv   []string
	// Handover, if set, turns the step's lease into the main lease without a
	// gap once the step exited 0; it replaces that lease's Finish.
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
	return nil
}

// ValidateTiming checks the kill grace and renew period against a TTL (0 = none).
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

// checkStartMargin refuses a lease taken by an attempt begun at at when
// less than a renewal period is left before its fence.
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

// lateStartError is a lease acquired too late to start under (lease.ErrHeld).
type lateStartError struct{ took, left, period time.Duration }

func (e *lateStartError) Error() string {
	return fmt.Sprintf("supervisor: the lease was acquired %v after the attempt began, leaving %v before its fencing deadline, less than one renewal period (%v); released, the command did not run (a slow etcd or file system: try again)",
		e.took.Round(time.Millisecond), e.left.Round(time.Millisecond), e.period)
}

func (e *lateStartError) Is(target error) bool { return target == lease.ErrHeld }
