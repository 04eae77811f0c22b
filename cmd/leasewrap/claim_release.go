package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease/claim"
)

// claimReleaseCmd releases only --holder's claim (the protocol's non-strict
// release): a missing, foreign or corrupted claim is left as is, exit 0.
type claimReleaseCmd struct {
	Key    string `arg:"" help:"Claim key."`
	Holder string `required:"" help:"Release only if this holder holds the claim."`
	claimRootFlag
}

func (c *claimReleaseCmd) Help() string {
	return `Removes KEY's claim file if --holder holds it, and prints
{"outcome":"released","key":KEY}.

Release is idempotent and non-strict: a missing claim, a claim of another
holder and a corrupted claim file are left untouched and still exit 0. A
corrupted file is never removed by leasewrap: inspect it and move it aside.
Exit 2 on usage or I/O errors.

Examples:
  leasewrap claim release node:build-42 --holder "ci:$HOSTNAME"
  leasewrap claim release build:nightly --holder me --root "$PWD"`
}

func (c *claimReleaseCmd) Validate() error {
	if c.Key == "" {
		return fmt.Errorf("key must be non-empty")
	}
	if err := claim.ValidateHolder(c.Holder); err != nil {
		return fmt.Errorf("--holder: %w", err)
	}
	return nil
}

func (c *claimReleaseCmd) Run(ctx context.Context, logger *slog.Logger, streams ioStreams) error {
	if err := c.claims(logger).Release(ctx, c.Key, c.Holder); err != nil {
		return &cli.ExitError{Code: cli.AdminError, Err: err}
	}
	return writeJSON(streams.Out, claim.Metadata{{Key: "outcome", Value: "released"}, {Key: "key", Value: c.Key}})
}
