package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease/reserve"
)

// reserveRunCmd runs a command at most once per idempotency key.
type reserveRunCmd struct {
	reserveKeyFlags
	RunID            string `name:"run-id" help:"Run id to reserve (default: a fresh 26-character lowercase ULID)."`
	PublishFailures  bool   `help:"Publish a failed run too, so retries replay the failure instead of running again. A run ended by a signal leasewrap passed on (a shutdown: SIGTERM, SIGINT, SIGHUP, SIGQUIT) is not published, so a retry runs again."`
	PublishSignalled bool   `help:"With --publish-failures, publish a run ended by a signal leasewrap passed on as well."`
	cli.RunFlags
}

func (c *reserveRunCmd) Help() string {
	return `A new key reserves a run id, takes the run's materializer lease (handed to
the command as LEASEWRAP_FD, so the run stays in flight even if leasewrap is
killed), and runs the command with LEASEWRAP_RUN_ID set. Exit 0 publishes
the run (HOME/runs/RUN_ID/manifest.json); a failure releases the key so a
retry runs again (or is published with --publish-failures; a run stopped by
a signal leasewrap passed on, a shutdown, only with --publish-signalled too).

A key already reserved is not run again: a published run is replayed (its
recorded exit code is leasewrap's); a run in flight is waited for up to
--wait, then replayed, else the conflict code; a run whose creator is dead
and unpublished is reclaimed and run; a legacy or unverifiable record is
refused with the steps to resolve it.

Examples:
  # cron: the nightly export runs once per date, however often cron fires.
  0 * * * * leasewrap reserve run "export-$(date +\%F)" -- /usr/local/bin/export
  leasewrap reserve run deploy-42 --repo acme/web --branch main --wait 10m -- ./deploy.sh`
}

func (c *reserveRunCmd) Validate() error {
	if err := checkDirFlag("--home", c.Home); err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	if c.Key == "" {
		return fmt.Errorf("%w: the reservation key is empty; give a non-empty key, e.g. export-2026-11-29", cli.ErrUsage)
	}
	if c.RunID != "" {
		if err := reserve.ValidateRunID(c.RunID); err != nil {
			return fmt.Errorf("%w: --run-id: %v", cli.ErrUsage, err)
		}
	}
	if c.PublishSignalled && !c.PublishFailures {
		return fmt.Errorf("%w: --publish-signalled only adds to --publish-failures; give both", cli.ErrUsage)
	}
	if err := c.RunFlags.OneHolder("a reservation is one run per key, and its record names that run"); err != nil {
		return err
	}
	return c.RunFlags.Check(0)
}

func (c *reserveRunCmd) Run(ctx context.Context, logger *slog.Logger) error {
	home, err := reserve.ResolveHome(c.Home, os.Getenv)
	if err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	warnRelativeHome(logger, c.Home, os.Getenv, home)
	host, _ := os.Hostname()
	l, err := reserve.NewLocker(reserve.LockerConfig{
		Key: c.Key, Repo: c.Repo, Branch: c.Branch, Home: home, RunID: c.RunID,
		PublishFailures: c.PublishFailures, PublishSignalled: c.PublishSignalled, Host: host, Argv: c.Command,
	})
	if err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	return c.Supervise(ctx, c.Config(l, logger))
}

// warnRelativeHome warns when the home came from a relative
// $ORCHESTRATECTL_HOME or $HOME (--home is made absolute by kong).
func warnRelativeHome(logger *slog.Logger, explicit string, getenv func(string) string, resolved string) {
	if explicit != "" {
		return
	}
	name := reserve.HomeEnv
	v := getenv(name)
	if v == "" {
		name, v = "HOME", getenv("HOME")
	}
	warnRelative(logger, name, v, "home", "home", resolved)
}
