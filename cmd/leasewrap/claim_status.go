package main

import (
	"context"
	"log/slog"

	"github.com/leasewrap/leasewrap/lease/claim"
)

// claimStatusCmd prints one key's state. It never fails on the claim's
// content: a corrupted file is reported as state "corrupted".
type claimStatusCmd struct {
	Key string `arg:"" help:"Claim key."`
	claimRootFlag
}

func (c *claimStatusCmd) Help() string {
	return `Prints KEY's state as one JSON object and exits 0:

  {"key":K,"state":"free"}
  {"key":K,"state":"corrupted","error":…,"path":…}
  {"key":K,"state":"live"|"suspect"|"stale","holder":…,"pid":…,"host":…,
   "machine_id":…|null,"acquired_at":MS,"expires_at":MS|null,
   "reason":…,"harness":…,"metadata":{…}}      (the last three only when present)

States: live = the holder's pid runs on this machine (and started before the
claim); suspect = inside its TTL but the pid is not provably alive (still
protected); stale = dead holder or expired TTL (the next acquire reclaims it);
corrupted = a file leasewrap will not read or touch.

Examples:
  leasewrap claim status node:build-42
  leasewrap claim status build:nightly --root "$PWD" | jq -r .state`
}

func (c *claimStatusCmd) Run(ctx context.Context, logger *slog.Logger, streams ioStreams) error {
	st := c.claims(logger).Status(c.Key)
	if st.State == claim.Free && st.Err != nil {
		logger.Warn("no claims root resolves for this key; reporting free", "key", c.Key, "err", st.Err)
	}
	return writeJSON(streams.Out, claimStatusJSON(st))
}
