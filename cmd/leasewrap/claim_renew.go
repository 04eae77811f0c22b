package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease/claim"
)

// claimRenewCmd extends a TTL claim by a fixed window from now.
type claimRenewCmd struct {
	Key    string `arg:"" help:"Claim key."`
	Holder string `required:"" help:"Renew only if this holder holds the claim."`
	TTLMs  int64  `name:"ttl-ms" required:"" help:"New deadline is now + N ms (60000..86400000)." placeholder:"N"`
	claimRootFlag
}

func (c *claimRenewCmd) Help() string {
	return `Sets expires_at = now + --ttl-ms on --holder's TTL claim, keeping
acquired_at, pid and everything else. The window is fixed: repeated renewals
never add up.

  exit 0  {"outcome":"renewed","key":K,"expires_at":MS}
  exit 1  {"outcome":"not_renewed","key":K,"reason":R}
          R = missing | held_by_other | no_ttl (a PID-liveness claim) |
              expired (never resurrected) | corrupted | busy (a peer holds the
              recovery mutex; try again)
  exit 2  usage or I/O error

Examples:
  # Heartbeat every minute for a 5-minute claim.
  while sleep 60; do leasewrap claim renew dispatch:job-7 --holder worker-3 --ttl-ms 300000 || break; done`
}

func (c *claimRenewCmd) Validate() error {
	if err := claim.ValidateHolder(c.Holder); err != nil {
		return fmt.Errorf("--holder: %w", err)
	}
	if err := claim.ValidateTTL(c.TTLMs); err != nil {
		return fmt.Errorf("--ttl-ms: %w", err)
	}
	return nil
}

func (c *claimRenewCmd) Run(ctx context.Context, logger *slog.Logger, streams ioStreams) error {
	cl := c.claims(logger)
	res, err := cl.Renew(ctx, c.Key, c.Holder, c.TTLMs)
	if err != nil {
		return &cli.ExitError{Code: cli.AdminError, Err: err}
	}
	if res == claim.Renewed {
		out := claim.Metadata{{Key: "outcome", Value: "renewed"}, {Key: "key", Value: c.Key}}
		if st := cl.Status(c.Key); st.Record != nil && st.Record.ExpiresAt != nil {
			out = append(out, claim.Field{Key: "expires_at", Value: *st.Record.ExpiresAt})
		}
		return writeJSON(streams.Out, out)
	}
	if err := writeJSON(streams.Out, claim.Metadata{{Key: "outcome", Value: "not_renewed"}, {Key: "key", Value: c.Key}, {Key: "reason", Value: string(res)}}); err != nil {
		return err
	}
	return &cli.ExitError{Code: cli.AdminHeld}
}
