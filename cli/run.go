package cli

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/supervisor"
)

// RunFlags are the flags every run verb shares: how to wait, how to stop
// the child, how to exit. Kind-specific flags live in each verb.
type RunFlags struct {
	Wait             time.Duration `help:"Keep trying to acquire a held lease for this long, reacting to its release at once (0: try once)." default:"0s"`
	KillGrace        time.Duration `help:"Time between the stop signal and SIGKILL of the whole job: when the lease is lost, at --timeout, and for what is left of the job after the child exits (default: a third of the lease's TTL, at most 10s; 10s for a lease without TTL). With a TTL the SIGKILL comes no later than TTL - margin after the last confirmed renewal."`
	Timeout          time.Duration `help:"Stop the job once the command has run this long (--wait not included): the stop signal, SIGKILL after --kill-grace, the lease settled, exit 124 (0: no limit)." default:"0s"`
	StopSignal       string        `help:"Signal that asks the job to stop when leasewrap stops it (lost lease, --timeout, leftovers after the child exits): a name (TERM, SIGQUIT, INT, HUP, USR1) or a number. Signals leasewrap forwards are passed on unchanged." default:"TERM"`
	RenewEvery       time.Duration `help:"Renewal period of a TTL lease (default TTL/3), or check period of a lease without TTL (default 5s)." default:"0s"`
	ConflictExitCode int           `help:"Exit code when the lease is held by another or not acquired within --wait." default:"75"`
	Subreaper        bool          `help:"Reap orphaned descendants like tini, so the job's strays stay leasewrap's children (--no-subreaper to turn off; always on as PID 1)." default:"true" negatable:""`
	LeaveStrays      bool          `help:"Settle the lease as soon as the child exits, leaving the rest of its process group running (unprotected by the lease)."`
	Job              string        `help:"What holds the job together: cgroup (a cgroup v2 of its own: nothing it starts can leave it), pgroup (its process group: setsid leaves it) or auto (cgroup where one can be created, else pgroup)." enum:"auto,cgroup,pgroup" default:"auto"`
	Splay            time.Duration `help:"Before the first attempt to acquire, wait a delay in [0, D) fixed per host and key (a hash, steady from run to run), so a fleet firing the same minute does not reach the lease's backend at once; not part of --wait; a signal meanwhile exits 128+N." default:"0s" placeholder:"D"`
	OnStart          string        `help:"Run CMD by /bin/sh -c once the lease is held, before the command starts (the lease is kept meanwhile), with the command's LEASEWRAP_* environment and LEASEWRAP_OUTCOME=started. A ping: --on-start 'curl -fsS -m 10 --retry 3 URL/start'." placeholder:"CMD"`
	OnExit           string        `help:"Run CMD by /bin/sh -c once the job is over and its lease settled, with LEASEWRAP_OUTCOME (ran, lost, timeout, error), LEASEWRAP_EXIT_CODE (leasewrap's exit status) and LEASEWRAP_DURATION_SECONDS. Neither hook runs when the lease was never held. A ping: --on-exit 'curl -fsS -m 10 --retry 3 URL/$LEASEWRAP_EXIT_CODE'." placeholder:"CMD"`
	HookTimeout      time.Duration `help:"Kill a hook (its process group) still running after this long; its failure is logged and changes nothing else. The default leaves room for curl -m 10 --retry 3 (47s)." default:"1m"`
	Slots            Slots         `help:"At most N holders at once: N leases of the kind, slot 0 the one named, slot i the same name with .i (flock) or -i (lock, kube); the command learns its slot as LEASEWRAP_SLOT. claim, reserve, session and once hold one per key and refuse any other N." default:"1" placeholder:"N"`
	ObserveFlags     `embed:""`

	line verbLine // the raw command line, for Check's messages (BeforeApply)
	// graceGiven is set when --kill-grace was on the command line
	// (BeforeApply): otherwise Check gives KillGrace its TTL's default.
	graceGiven bool

	Command []string `arg:"" passthrough:"" name:"command" help:"The command to run, after --."`
}

// MinRenewEvery is the shortest --renew-every accepted.
const MinRenewEvery = 100 * time.Millisecond

// MaxDefaultKillGrace is the kill grace of a lease without TTL, and the
// most a TTL's default grace grows to.
const MaxDefaultKillGrace = 10 * time.Second

// DefaultKillGrace is the default --kill-grace: a third of the TTL, at most
// 10 s (10 s without TTL). With the default renewal period and fence
// margin this leaves room for retries, so every TTL from 4 s works.
func DefaultKillGrace(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		return MaxDefaultKillGrace
	}
	return min(MaxDefaultKillGrace, (ttl / 3).Truncate(time.Millisecond))
}

// Check checks the shared flags against ttl and defaults --kill-grace.
// (Not Validate: kong would call that without the TTL.)
func (f *RunFlags) Check(ttl time.Duration) error {
	if err := f.line.missingKey(f.Command); err != nil {
		return err
	}
	if len(f.Command) > 0 && f.Command[0] == "--" {
		f.Command = f.Command[1:]
	} else if len(f.Command) > 0 && strings.HasPrefix(f.Command[0], "-") {
		// kong hands an unknown flag after the key to the command; a
		// command starting with "-" must come after an explicit --.
		if s := Suggest(f.line.root, f.line.args); s != "" {
			return fmt.Errorf("%w: unknown flag %s (the command goes after --); did you mean: %s", ErrUsage, f.Command[0], s)
		}
		return fmt.Errorf("%w: unknown flag %s (the command goes after --)", ErrUsage, f.Command[0])
	}
	if len(f.Command) == 0 {
		return fmt.Errorf("%w: no command given; put it after --, e.g. %s -- ./job.sh", ErrUsage, f.line.example())
	}
	if f.Command[0] == "" {
		return fmt.Errorf("%w: the command is empty (\"\"); put the program to run after --", ErrUsage)
	}
	if !f.graceGiven {
		f.KillGrace = DefaultKillGrace(ttl)
	}
	if f.Wait < 0 || f.Splay < 0 || f.HookTimeout < 0 || f.KillGrace < 0 || f.RenewEvery < 0 || f.Timeout < 0 {
		return fmt.Errorf("%w: durations must not be negative", ErrUsage)
	}
	if f.RenewEvery != 0 && f.RenewEvery < MinRenewEvery {
		return fmt.Errorf("%w: --renew-every %v is below the minimum of %v (a shorter period only burns CPU; leave it out for the default)", ErrUsage, f.RenewEvery, MinRenewEvery)
	}
	if _, err := ParseStopSignal(f.StopSignal); err != nil {
		return err
	}
	if f.ConflictExitCode < 0 || f.ConflictExitCode > 255 {
		return fmt.Errorf("%w: --conflict-exit-code %d is not in 0..255", ErrUsage, f.ConflictExitCode)
	}
	if err := f.ObserveFlags.check(); err != nil {
		return err
	}
	if err := f.Config(nil, nil).ValidateTiming(ttl); err != nil {
		return f.timingError(ttl, err)
	}
	return nil
}

// Config is the supervisor configuration the flags describe for l; a verb
// adds its kind's own settings (a claim's anchor mode) before Supervise.
func (f *RunFlags) Config(l lease.Locker, logger *slog.Logger) supervisor.Config {
	stop, _ := ParseStopSignal(f.StopSignal) // Check refused a bad one; 0 is SIGTERM
	return supervisor.Config{
		Locker:      l,
		Argv:        f.Command,
		Wait:        f.Wait,
		Splay:       f.Splay,
		OnStart:     f.OnStart,
		OnExit:      f.OnExit,
		HookTimeout: f.HookTimeout,
		ExitCode:    f.exitCode,
		KillGrace:   f.KillGrace,
		Timeout:     f.Timeout,
		StopSignal:  stop,
		RenewPeriod: f.RenewEvery,
		Subreaper:   f.Subreaper,
		LeaveStrays: f.LeaveStrays,
		Job:         supervisor.JobMode(f.Job),
		Logger:      logger,
		ExitAfter:   true, // main exits with Run's outcome
	}
}

// OneHolder refuses --slots other than 1 for a kind whose protocol
// defines one holder per key; why says so in the kind's words.
func (f *RunFlags) OneHolder(why string) error {
	if f.Slots.N() != 1 {
		return fmt.Errorf("%w: --slots %d: %s; run N keys instead (or use flock, lock or kube, which take --slots)", ErrUsage, f.Slots.N(), why)
	}
	return nil
}

// exitCode is the status Main exits with for a run's outcome (the on-exit
// hook's LEASEWRAP_EXIT_CODE).
func (f *RunFlags) exitCode(res supervisor.Result, err error) int {
	if err != nil {
		return ExitCode(err, io.Discard)
	}
	return RunExitCode(res, f.ConflictExitCode)
}

// Supervise runs cfg's command under its lease and returns a *Report to
// Main: the outcome (RunExitCode) or failure, and what the run was.
func (f *RunFlags) Supervise(ctx context.Context, cfg supervisor.Config) error {
	rep := &Report{Kind: cfg.Locker.Kind(), Key: cfg.Locker.Key()}
	// A command that cannot run is refused before acquiring (127/126, as env(1)).
	res, err := f.ObserveFlags.run(ctx, cfg, rep) // supervisor.Run, with --listen beside it
	if err != nil {
		rep.Err = err
		return rep
	}
	rep.Result = &res
	rep.Err = Outcome(res, f.ConflictExitCode, cfg.Logger)
	return rep
}

// Outcome is a run's Result as the verb's return: an *ExitError with
// RunExitCode's status and, if the command did not run to its end, the reason.
func Outcome(res supervisor.Result, conflictCode int, logger *slog.Logger) error {
	code := RunExitCode(res, conflictCode)
	var replay *lease.ReplayError
	switch {
	case res.Outcome == supervisor.Ran:
		return &ExitError{Code: code}
	case errors.As(res.Cause, &replay):
		if logger != nil {
			logger.Info("already done; replaying the recorded result, not running the command",
				"kind", replay.Kind, "key", replay.Key, "replayed", replay.Summary, "exit_code", replay.ExitCode)
		}
		return &ExitError{Code: code}
	}
	return &ExitError{Code: code, Err: res.Cause}
}

// DefaultHolder is unique to this invocation (host, pid, random), so two
// wrappers never re-acquire each other's lease as "the same holder".
func DefaultHolder() string { return defaultHolder(rand.Read) }

// defaultHolder is DefaultHolder with its random source; if that fails the
// suffix is the clock's nanoseconds (a holder is not a secret).
func defaultHolder(read func([]byte) (int, error)) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return fmt.Sprintf("leasewrap:%s:%d:%s", host, os.Getpid(), uniqueSuffix(read))
}

// UniqueSuffix is the random part of a default holder identity, 8 hex
// digits (the kube kind's identity ends with it too).
func UniqueSuffix() string { return uniqueSuffix(rand.Read) }

func uniqueSuffix(read func([]byte) (int, error)) string {
	var b [4]byte
	if _, err := read(b[:]); err != nil {
		binary.BigEndian.PutUint32(b[:], uint32(time.Now().UnixNano()))
	}
	return hex.EncodeToString(b[:])
}
