package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease/session"
)

// sessionMaintainCmd holds a session's coordinator exclusively while a
// command runs (an offline migration).
type sessionMaintainCmd struct {
	sessionFlags
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
	if err := c.sessionFlags.check(); err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	if err := c.RunFlags.OneHolder("a session's maintenance guard is one per session"); err != nil {
		return err
	}
	return c.RunFlags.Check(0)
}

func (c *sessionMaintainCmd) Run(ctx context.Context, logger *slog.Logger) error {
	mc := session.MaintenanceConfig{SessionID: c.sid, Root: c.Root, Holder: cli.DefaultHolder()}
	if c.Wait == 0 {
		mc.LockWait = session.TryOnceLockWait // an owner's registration is a moment, not 10 s
	}
	l, err := session.NewMaintenanceLocker(mc)
	if err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	return c.Supervise(ctx, c.Config(l, logger))
}
