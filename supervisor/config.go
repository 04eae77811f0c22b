package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
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

// Config describes one supervised run.
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
	// KillGrace is the time between SIGTERM and SIGKILL when the child must
	// be stopped because the lease was lost. Default 10 s.
	KillGrace time.Duration
	// RenewPeriod is the renewal period of a TTL lease (0 = TTL/3), and the
	// check period of a lease without TTL (0 = 5 s).
	RenewPeriod time.Duration
	// FinishTimeout bounds settling the lease after the child exits.
	// Default 30 s.
	FinishTimeout time.Duration
	// Anchor chooses how anchored kinds start the child stopped.
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
	// under a lease that Pre's lease hands over without a gap (when it
	// implements lease.Successor) or that Locker acquires.
	Pre *Step
	// Logger receives one line per event that matters; nil discards.
	Logger *slog.Logger
	// ExitAfter says the process exits as soon as Run returns (leasewrap's
	// own main does): the signal handlers Run installs are then left in
	// place instead of being removed. Removing them costs a round trip to
	// the Go runtime's signal-mask thread per signal, about a third of a
	// millisecond for the ten Run catches, on every run. A signal that
	// arrives after Run returned is then dropped, as one that arrives while
	// the lease is being settled already is. A program that goes on after
	// Run leaves it false.
	ExitAfter bool

	// HelperExe is the executable started for the supervisor's helper
	// roles, the exec gate and an ephemeral lease's job guard; it must call
	// Gate first in main. "" is os.Executable(). A large binary (one that
	// links the etcd client) may name a small one beside it that also calls
	// Gate, so that each guard costs less memory.
	HelperExe string

	// foreground is whether the child gets the terminal; settled once,
	// before any attempt.
	foreground bool
	// cgroupParent, if set, replaces cgroup.Parent (a test seam).
	cgroupParent func() (string, error)
}

// helperExe is the executable of the helper roles.
func (c *Config) helperExe(role string) (string, error) {
	if c.HelperExe != "" {
		return c.HelperExe, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("supervisor: find leasewrap's own executable for the %s: %w", role, err)
	}
	return exe, nil
}

const (
	defaultKillGrace     = 10 * time.Second
	defaultFinishTimeout = 30 * time.Second
)

func (c Config) withDefaults() Config {
	if c.KillGrace == 0 {
		c.KillGrace = defaultKillGrace
	}
	if c.FinishTimeout == 0 {
		c.FinishTimeout = defaultFinishTimeout
	}
	if c.Anchor == "" {
		c.Anchor = AnchorAuto
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

// Step is a command that runs under its own lease before the main one.
type Step struct {
	Locker lease.Locker
	Argv   []string
}

// job is one command and the lease it runs under, resolved before any
// lease is taken.
type job struct {
	locker lease.Locker
	argv   []string
	path   string   // argv[0] resolved in PATH
	hold   *jobHold // what holds the job together, for every attempt's child
}

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
	if c.Wait < 0 || c.KillGrace < 0 || c.RenewPeriod < 0 || c.FinishTimeout < 0 {
		return errors.New("supervisor: durations must not be negative")
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
	d := c.withDefaults()
	return d.renewConfig(ttl, nil).Validate()
}

// renewConfig is the keeper configuration for a lease of the given TTL.
func (c Config) renewConfig(ttl time.Duration, l lease.Lease) renew.Config {
	rc := renew.Config{
		TTL:       ttl,
		Period:    c.RenewPeriod,
		Grace:     c.KillGrace,
		Logger:    c.Logger,
		Permanent: func(err error) bool { return errors.Is(err, lease.ErrLost) },
		Renew:     func(context.Context) error { return nil },
	}
	if l != nil {
		rc.Renew = l.Renew
	}
	return rc
}
