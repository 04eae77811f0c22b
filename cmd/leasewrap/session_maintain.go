package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/leasewrap/leasewrap/internal/cli"
	"github.com/leasewrap/leasewrap/lease/session"
)

// sessionMaintainCmd holds a session's coordinator exclusively while a
// command runs (an offline migration).
type sessionMaintainCmd struct {
	SID  string `arg:"" name:"sid" help:"Session id: a lowercase hyphenated UUID."`
	Root string `help:"Session root directory (holding locks/ and leases/). Required unless LEASEWRAP_SESSION_ROOT is set." env:"LEASEWRAP_SESSION_ROOT" placeholder:"DIR"`
	cli.RunFlags
}

func (c *sessionMaintainCmd) Help() string {
	return `Takes the session's coordinator lock (ROOT/locks/SID.lock) exclusively and
holds it while the command runs; refused (conflict code) while any owner is
live. No owner can register meanwhile. The command inherits the locked
coordinator as LEASEWRAP_FD, so the guard holds until it exits even if
leasewrap is killed.

Example:
  leasewrap session maintain $SID --root /var/lib/bcode --wait 1m -- ./offline-migrate.sh`
}

func (c *sessionMaintainCmd) Validate() error {
	if _, err := session.ParseID(c.SID); err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	if c.Root == "" {
		return fmt.Errorf("%w: no session root: give --root DIR or set LEASEWRAP_SESSION_ROOT", cli.ErrUsage)
	}
	return c.RunFlags.Check(0)
}

func (c *sessionMaintainCmd) Run(ctx context.Context, logger *slog.Logger) error {
	mc := session.MaintenanceConfig{SessionID: session.MustParseID(c.SID), Root: c.Root, Holder: cli.DefaultHolder()}
	if c.Wait == 0 {
		mc.LockWait = session.TryOnceLockWait // an owner's registration is a moment, not 10 s
	}
	l, err := session.NewMaintenanceLocker(mc)
	if err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	return c.Supervise(ctx, c.Config(l, logger))
}
