package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease/claim"
)

// claimRunCmd holds a work claim while a command runs.
type claimRunCmd struct {
	Key      string        `arg:"" help:"Claim key, e.g. build:nightly (≤ 256 characters)."`
	Holder   string        `help:"Holder identity. Default: unique to this invocation (leasewrap:HOST:PID:RANDOM). A live claim under the same holder name is a conflict like any other (only 'claim acquire' re-acquires idempotently)."`
	Root     string        `help:"Claims root: the claim is ROOT/.fno/claims/KEY.lock. Default: $FNO_CLAIMS_ROOT or $HOME for node:, dispatch:, reconcile: and session: keys; required otherwise." type:"path"`
	TTL      time.Duration `help:"Claim TTL (1m..24h), renewed every --renew-every (default TTL/3) while the command runs. It protects the claim where its pid cannot be checked (another host, another container's pid namespace); after a crash that leaves no process behind, the key stays blocked until it runs out. 0: liveness is the command's pid alone, checkable only on this host in this pid namespace." default:"2m"`
	Reason   string        `help:"Free-text reason recorded in the claim."`
	Metadata string        `help:"JSON object recorded in the claim."`
	Anchor   string        `help:"Accepted for compatibility; every value holds the command in the exec gate until the claim names its pid." enum:"auto,ptrace,gate" default:"auto"`
	cli.RunFlags

	meta claim.Metadata // --metadata, decoded by Validate
}

func (c *claimRunCmd) Help() string {
	return `The claim records the wrapped command's own pid from its birth (its process
waits in an exec gate until the claim is written, then execs the command), so
if leasewrap is killed the claim stays live for as long as the command runs,
for every implementation of the protocol. If the claim is held, the command
never runs.

By default the claim has a TTL of 2m, renewed every 40s: peers that cannot
check the pid (another host, another container sharing the root) see it
protected by its TTL. The price: if leasewrap is SIGKILLed and the command
is gone too, the key stays blocked until the claim expires (at most --ttl
after the last renewal). --ttl 0 makes a pid-only claim, reclaimable once the
command is gone, but only safe where every peer shares this host and pid
namespace.

Examples:
  leasewrap claim run build:nightly --root /srv/jobs -- ./nightly.sh
  leasewrap claim run node:db-migrate --ttl 5m --wait 1m -- ./migrate.sh
  leasewrap claim run local:reindex --root /srv/jobs --ttl 0 -- ./reindex.sh   # pid-only: one host, no containers
  */5 * * * * leasewrap -q claim run sync --root /var/lib/jobs -- /usr/local/bin/sync   # crontab: a fixed key`
}

func (c *claimRunCmd) Validate() error {
	if err := checkDirFlag("--root", c.Root); err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	if c.TTL != 0 {
		if err := claim.ValidateTTL(c.TTL.Milliseconds()); err != nil || c.TTL%time.Millisecond != 0 {
			return fmt.Errorf("%w: --ttl %v is outside the protocol's bounds of 1m to 24h (or 0 for pid liveness)", cli.ErrUsage, c.TTL)
		}
	}
	if c.Metadata != "" {
		m, err := claim.ParseMetadataJSON([]byte(c.Metadata))
		if err != nil {
			return fmt.Errorf("%w: --metadata: %v", cli.ErrUsage, err)
		}
		c.meta = m
	}
	if err := c.RunFlags.OneHolder("a claim's record names one holder per key"); err != nil {
		return err
	}
	return c.RunFlags.Check(c.TTL)
}

func (c *claimRunCmd) Run(ctx context.Context, logger *slog.Logger) error {
	holder := c.Holder
	if holder == "" {
		holder = cli.DefaultHolder()
	}
	if c.Root == "" {
		// The protocol resolves it against the working directory, as the
		// Python reference does; a cron job and a shell then disagree.
		warnRelative(logger, "FNO_CLAIMS_ROOT", os.Getenv("FNO_CLAIMS_ROOT"), "root")
	}
	l, err := claim.NewLocker(claim.LockerConfig{
		Key: c.Key, Holder: holder, Root: c.Root, TTL: c.TTL, Reason: c.Reason, Metadata: c.meta, Logger: logger,
	})
	if err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	cfg := c.Config(l, logger)
	return c.Supervise(ctx, cfg)
}
