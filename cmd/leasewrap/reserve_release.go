package main

import (
	"context"
	"fmt"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease/reserve"
)

// reserveReleaseCmd removes a key's reservation if it names --run-id
// (legacy records included). It checks neither liveness nor publication:
// releasing a published run's key makes the next run execute again.
type reserveReleaseCmd struct {
	reserveKeyFlags
	RunID string `name:"run-id" required:"" help:"Release only if the record names this run id."`
}

func (c *reserveReleaseCmd) Validate() error {
	if err := reserve.ValidateRunID(c.RunID); err != nil {
		return fmt.Errorf("--run-id: %w", err)
	}
	return nil
}

type reserveReleaseOutput struct {
	Outcome      string  `json:"outcome"` // released, not_owner, absent
	Key          string  `json:"key"`
	KeyHash      string  `json:"key_hash"`
	RunID        string  `json:"run_id"`
	CurrentRunID *string `json:"current_run_id"` // the run the record names (not_owner, released), else null
	Path         string  `json:"path"`
}

func (c *reserveReleaseCmd) Run(ctx context.Context, streams ioStreams) error {
	s, err := c.store()
	if err != nil {
		return err
	}
	k := c.key()
	outcome, cur, err := s.Release(ctx, k, c.RunID)
	if err != nil {
		return &cli.ExitError{Code: cli.AdminError, Err: err}
	}
	out := reserveReleaseOutput{Outcome: outcome.String(), Key: c.Key, KeyHash: k.Hash(), RunID: c.RunID, Path: s.RecordPath(k)}
	if cur != nil {
		out.CurrentRunID = &cur.RunID
	}
	if err := writeJSON(streams.Out, out); err != nil {
		return err
	}
	if outcome != reserve.Released {
		return &cli.ExitError{Code: cli.AdminHeld}
	}
	return nil
}
