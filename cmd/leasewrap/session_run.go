package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/lease/session"
	"github.com/leasewrap/leasewrap/supervisor"
)

// sessionRunCmd owns a session while a command runs.
type sessionRunCmd struct {
	sessionFlags
	Epoch     *uint32 `help:"Storage writer epoch of the owner (required; bcode's current epoch is 6). Owners of different epochs never share a session."`
	Instance  string  `help:"Daemon instance id. Wrappers sharing --instance and --epoch may own one session at once (the protocol's re-entrant rule). Default: process-PID, unique to this invocation."`
	Namespace string  `help:"Daemon namespace recorded in the owner record."`
	Endpoint  string  `help:"Endpoint recorded in the owner record (where clients reach the owner)."`
	Build     string  `help:"Build fingerprint recorded in the owner record."`
	Migrate   string  `placeholder:"SHELL-COMMAND" help:"Run this shell command (sh -c) under the maintenance guard first, then register as owner without a gap and start the command. A failed migration registers nothing and runs nothing."`
	cli.RunFlags
}

func (c *sessionRunCmd) Help() string {
	return `The owner record (ROOT/leases/SID/TOKEN.json) is published holding a shared
flock on its own descriptor, which the command inherits as LEASEWRAP_FD: the
registration stays live for as long as the command (or anything it passes
the descriptor to) runs, even if leasewrap is killed. On exit, the record
is removed if its token still matches. The command also gets
LEASEWRAP_SESSION_ID and LEASEWRAP_LEASE_TOKEN.

Examples:
  leasewrap session run 5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42 --root /var/lib/bcode --epoch 6 -- bcoded
  leasewrap session run $SID --epoch 6 --migrate './migrate.sh' -- bcoded`
}

func (c *sessionRunCmd) Validate() error {
	if err := c.sessionFlags.check(); err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	if c.Epoch == nil {
		return fmt.Errorf("%w: --epoch is required (the storage writer epoch; bcode's current one is %d)", cli.ErrUsage, session.CurrentWriterEpoch)
	}
	if err := c.RunFlags.OneHolder("a session has one owner record, and its epoch orders one owner after another"); err != nil {
		return err
	}
	return c.RunFlags.Check(0)
}

// ownerConfig is the owner registration the flags describe.
func (c *sessionRunCmd) ownerConfig() session.LockerConfig {
	oc := session.OwnerContext{StorageWriterEpoch: c.Epoch}
	instance := c.Instance
	if instance == "" {
		instance = fmt.Sprintf("process-%d", os.Getpid())
	}
	oc.DaemonInstanceID = session.Some(instance)
	// The owner is the daemon, so the path the supervisor will exec is
	// recorded, not leasewrap's; a command that cannot run records none.
	if path, argv, err := supervisor.Resolve(c.Command, "", nil); err == nil {
		if len(argv) != len(c.Command) {
			path = argv[1]
		}
		oc.ExecutablePath = session.Some(path)
	}
	for _, f := range []struct {
		dst **string
		v   string
	}{{&oc.DaemonNamespace, c.Namespace}, {&oc.Endpoint, c.Endpoint}, {&oc.BuildFingerprint, c.Build}} {
		if f.v != "" {
			*f.dst = session.Some(f.v)
		}
	}
	cfg := session.LockerConfig{SessionID: c.sid, Root: c.Root, OwnerContext: oc}
	if c.Wait == 0 {
		// Try once: wait out an owner's momentary hold of the coordinator,
		// not a maintenance hold for the seed's whole 10 s.
		cfg.LockWait = session.TryOnceLockWait
	}
	return cfg
}

func (c *sessionRunCmd) Run(ctx context.Context, logger *slog.Logger) error {
	owner := c.ownerConfig()
	l, err := session.NewLocker(owner)
	if err != nil {
		if errors.Is(err, lease.ErrRefused) {
			return err
		}
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	cfg := c.Config(l, logger)
	if c.Migrate != "" {
		if cfg.Pre, err = newMigrationStep(owner, l.Holder(), c.Migrate); err != nil {
			return fmt.Errorf("%w: %v", cli.ErrUsage, err)
		}
	}
	return c.Supervise(ctx, cfg)
}
