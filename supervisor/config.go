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

// AnchorMode chooses how an anchored lease kind starts its child stopped.
type AnchorMode string

const (
	// AnchorAuto uses ptrace and falls back to the exec gate where ptrace is
	// refused or the program is set-user-ID/set-group-ID.
	AnchorAuto AnchorMode = "auto"
	// AnchorPtrace uses ptrace only and fails if it is refused.
	AnchorPtrace AnchorMode = "ptrace"
	// AnchorGate always uses the exec gate (one extra start of leasewrap).
	AnchorGate AnchorMode = "gate"
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
	// Splay, if positive, delays the first attempt to acquire by
	// SplayOffset(host, kind, key, Splay), so that a fleet firing the same
	// minute does not reach the backend at once. It is not part of Wait; a
	// terminating signal during it aborts the run (Aborted).
	Splay time.Duration
	// SplayHost replaces the host name in the splay's offset ("" = the
	// host name).
	SplayHost string
	// KillGrace is the time between the stop signal (StopSignal) and
	// SIGKILL when the job must be stopped (the lease was lost, the time
	// limit reached, or strays are left after the child exited). Zero
	// means zero: SIGKILL at once. (The command line's default is 10 s.)
	// For a lease with a TTL the SIGKILL comes no later than the last
	// confirmed renewal's start + TTL - margin, whenever the stop began.
	KillGrace time.Duration
	// Timeout, if positive, limits how long the command runs: once it has
	// run that long (from its start, on the monotonic clock; waiting for
	// the lease is not part of it) the job is stopped as on a lost lease,
	// the stop signal then SIGKILL after KillGrace, and the lease is
	// settled normally; the outcome is TimedOut.
	Timeout time.Duration
	// StopSignal is the signal that asks the job to stop when leasewrap
	// stops it (a lost lease, the time limit, what is left of the job
	// after the child exited); 0 means SIGTERM. Signals leasewrap forwards
	// are passed on unchanged.
	StopSignal syscall.Signal
	// RenewPeriod is the renewal period of a TTL lease (0 = TTL/3), and the
	// check period of a lease without TTL (0 = 5 s).
	RenewPeriod time.Duration
	// FinishTimeout bounds settling the lease after the job is over; 0 is
	// 30 s. After the fencing deadline or a loss the bound is also the
	// lease's expiry. A Finish still running at the bound is abandoned.
	FinishTimeout time.Duration
	// Anchor chooses how anchored kinds start the child stopped; "" is
	// AnchorAuto.
	Anchor AnchorMode
	// Subreaper makes leasewrap reap orphaned descendants (like tini), so
	// a job's strays stay its children and their corpses never linger. It
	// is implied when leasewrap is PID 1. Without it the reaper waits for
	// its own child only, so a program that embeds the supervisor keeps the
	// statuses of its other children.
	Subreaper bool
	// LeaveStrays settles the lease as soon as the child exits, leaving
	// whatever else still runs in its process group alone (a daemon started
	// on purpose). By default the job is the whole group: the lease is
	// settled only once the group is empty, and the child's leftovers get
	// SIGTERM, then SIGKILL after KillGrace.
	LeaveStrays bool
	// Job chooses what holds the job together (JobAuto when empty).
	Job JobMode
	// Pre, if set, runs first: its command runs under its own lease (for
	// example a migration under a session's maintenance guard), supervised
	// like the main command. Only if it exits 0 does the main command run,
	// under the lease Pre.Handover makes of Pre's lease (without a gap) or,
	// without Handover, the lease Locker acquires.
	Pre *Step
	// OnStart and OnExit, if set, are hooks run by /bin/sh -c with the
	// lease's environment plus LEASEWRAP_OUTCOME (and, on exit,
	// LEASEWRAP_EXIT_CODE and LEASEWRAP_DURATION_SECONDS): OnStart once the
	// lease is held, before the command starts, while the lease is kept;
	// OnExit once the lease of a run that held it was settled. Neither runs
	// for a run that never held the lease (held by another, replayed,
	// aborted). A hook that fails or hangs is logged and changes nothing
	// else; what it leaves running is killed when it exits, and all of it
	// at HookTimeout (hook.go).
	OnStart, OnExit string
	// HookTimeout bounds each hook; 0 is no limit (as Timeout's 0).
	HookTimeout time.Duration
	// ExitCode, if set, is the status leasewrap exits with for a run's
	// outcome (LEASEWRAP_EXIT_CODE of the on-exit hook); nil uses
	// Result.ExitCode.
	ExitCode func(Result, error) int
	// Logger receives one line per event that matters; nil discards.
	Logger *slog.Logger
	// OnEvent, if set, is called synchronously from the supervisor's
	// goroutines with each Event of the run (for metrics and health
	// endpoints); it must not block and must be safe for concurrent use.
	OnEvent func(Event)
	// ExitAfter says the process exits as soon as Run returns (leasewrap's
	// own main does): the signal handlers Run installs are then left in
	// place instead of being removed. Removing them costs a round trip to
	// the Go runtime's signal-mask thread per signal, about a third of a
	// millisecond for the ten Run catches, on every run. A signal that
	// arrives after Run returned is then dropped, as one that arrives while
	// the lease is being settled already is. A program that goes on after
	// Run leaves it false. It is configuration, not a benchmark hook: only
	// the embedding program knows whether its process ends with the run.
	ExitAfter bool

	// HelperExe is the executable started for the supervisor's helper
	// roles, the exec gate and the job guard of a lease that dies with
	// leasewrap; it must call Gate first in main. "" is os.Executable(). A
	// large binary (one that links the etcd client) may name a small one
	// beside it that also calls Gate, so that each guard costs less memory.
	HelperExe string

	// cgroupParent, if set, replaces cgroup.Parent (a test seam).
	cgroupParent func() (string, error)
}

// Step is a command that runs under its own lease before the main one.
type Step struct {
	Locker lease.Locker
	Argv   []string
	// Handover, if set, turns the step's lease, once its command exited 0,
	// into the main command's lease without a gap in which another could
	// take it (a session's maintenance guard becoming its owner
	// registration). It replaces the step lease's Finish: on error, that
	// lease has been settled. Without it the step's lease is settled and
	// Config.Locker acquires the main lease.
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
