package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/leasewrap/leasewrap/lease/reserve"
)

// reserveRunCmd runs a command at most once per idempotency key.
type reserveRunCmd struct {
	Key             string `arg:"" help:"The idempotency key, e.g. export-2026-11-29."`
	Repo            string `help:"Source repository the key is scoped to (orchestratectl's source_repo); empty = none."`
	Branch          string `help:"Source branch the key is scoped to (orchestratectl's source_branch); empty = none."`
	Home            string `help:"orchestratectl home (default: $ORCHESTRATECTL_HOME, else $HOME/.orchestratectl)." type:"path"`
	RunID           string `name:"run-id" help:"Run id to reserve (default: a fresh 26-character lowercase ULID)."`
	PublishFailures bool   `help:"Publish a failed run too, so retries replay the failure instead of running again."`
	runFlags
}

func (c *reserveRunCmd) Help() string {
	return `A new key reserves a run id, takes the run's materializer lease (handed to
the command as LEASEWRAP_FD, so the run stays in flight even if leasewrap is
killed), and runs the command with LEASEWRAP_RUN_ID set. Exit 0 publishes
the run (HOME/runs/RUN_ID/manifest.json); a failure releases the key so a
retry runs again (or is published with --publish-failures).

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
	if c.RunID != "" {
		if err := reserve.ValidateRunID(c.RunID); err != nil {
			return fmt.Errorf("%w: --run-id: %v", errUsage, err)
		}
	}
	return c.runFlags.validate(0)
}

func (c *reserveRunCmd) Run(ctx context.Context, logger *slog.Logger) error {
	home, err := reserve.ResolveHome(c.Home, os.Getenv)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	host, _ := os.Hostname()
	l, err := reserve.NewLocker(reserve.LockerConfig{
		Key: c.Key, Repo: c.Repo, Branch: c.Branch, Home: home, RunID: c.RunID,
		PublishFailures: c.PublishFailures, Host: host,
	})
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return c.supervise(ctx, c.config(l, logger))
}
