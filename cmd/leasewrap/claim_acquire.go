package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease/claim"
)

// claimAcquireCmd takes a claim once, for scripts that manage the holder
// process themselves (leasewrap claim run is the supervised form).
type claimAcquireCmd struct {
	Key    string `arg:"" help:"Claim key, for example node:build-42 or session:5f0c…"`
	Holder string `required:"" help:"Holder identity recorded in the claim; the same holder re-acquires idempotently."`
	claimRootFlag
	PID      int    `help:"Pid whose liveness keeps the claim. Default: the pid of the process that ran leasewrap (its parent), because leasewrap itself exits right away." placeholder:"PID"`
	TTLMs    int64  `name:"ttl-ms" help:"Time to live in ms (60000..86400000). Without it the claim lives exactly as long as --pid runs." placeholder:"N"`
	Reason   string `help:"Free-text reason recorded in the claim."`
	Metadata string `help:"A JSON object recorded in the claim (opaque to the protocol)." placeholder:"JSON"`
	JSON     bool   `name:"json" help:"Accepted for compatibility; output is always JSON."`

	meta claim.Metadata
}

func (c *claimAcquireCmd) Help() string {
	return `Takes the claim on KEY for --holder and prints the claim as one JSON object.

Outcomes:
  exit 0  {"schema_version":1,"key":…,"holder":…,"acquired_at":…,"pid":…,"host":…,…,"outcome":"acquired"}
          (a fresh claim, the same holder re-acquiring, or a stale claim reclaimed)
  exit 1  {"outcome":"held_by_other","holder":…,"pid":…,"host":…}
          (another holder's claim is live, or inside its TTL)
  exit 2  usage, validation, I/O error, or a corrupted claim file (message on stderr)

The claim is live while --pid runs on this machine (and, with --ttl-ms, until
the TTL expires). Without --pid the pid of the calling process is recorded —
normally your shell script — not leasewrap's own, which is gone a moment later.

Examples:
  # Claim a node for this script; released automatically when the script dies.
  leasewrap claim acquire node:build-42 --holder "ci:$HOSTNAME"

  # A TTL claim for a worker pid, with a reason and metadata.
  leasewrap claim acquire dispatch:job-7 --holder worker-3 --pid "$WORKER_PID" \
      --ttl-ms 300000 --reason "nightly" --metadata '{"ticket":"X-42"}'

  # Keys without a global prefix need a root.
  leasewrap claim acquire build:nightly --holder me --root "$PWD"`
}

func (c *claimAcquireCmd) Validate() error {
	if err := claim.ValidateKey(c.Key); err != nil {
		return err
	}
	if err := claim.ValidateHolder(c.Holder); err != nil {
		return fmt.Errorf("--holder: %w", err)
	}
	if c.PID < 0 {
		return fmt.Errorf("--pid must be positive, have %d", c.PID)
	}
	if c.TTLMs != 0 {
		if err := claim.ValidateTTL(c.TTLMs); err != nil {
			return fmt.Errorf("--ttl-ms: %w", err)
		}
	}
	if c.Metadata != "" {
		m, err := claim.ParseMetadataJSON([]byte(c.Metadata))
		if err != nil {
			return fmt.Errorf("--metadata: %w", err)
		}
		c.meta = m
	}
	return nil
}

func (c *claimAcquireCmd) Run(ctx context.Context, logger *slog.Logger, streams ioStreams) error {
	pid := c.PID
	if pid == 0 {
		pid = os.Getppid()
	}
	acq, err := c.claims(logger).Acquire(ctx, c.Key, c.Holder, claim.AcquireOptions{
		PID: pid, TTLMs: c.TTLMs, Reason: c.Reason, Metadata: c.meta,
	})
	var held *claim.HeldByOtherError
	if errors.As(err, &held) {
		if err := writeJSON(streams.Out, claimHeldOutput{Outcome: "held_by_other", Holder: held.Holder, PID: held.PID, Host: held.Host}); err != nil {
			return err
		}
		return &cli.ExitError{Code: cli.AdminHeld}
	}
	if err != nil {
		return &cli.ExitError{Code: cli.AdminError, Err: err}
	}
	out := append(acq.Record.Fields(), claim.Field{Key: "outcome", Value: "acquired"})
	return writeJSON(streams.Out, out)
}
