package main

import (
	"context"
	"encoding/json"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease/reserve"
)

// reserveLookupCmd shows a key's reservation, read under the key lock
// (created if needed, as orchestratectl does); an unreadable record is exit 2.
type reserveLookupCmd struct {
	reserveKeyFlags
}

type reserveLookupOutput struct {
	Key             string          `json:"key"`
	KeyHash         string          `json:"key_hash"`
	State           string          `json:"state"` // "free" or "reserved"
	Record          json.RawMessage `json:"record"`
	UnknownFields   map[string]any  `json:"unknown_fields,omitempty"`
	Published       bool            `json:"published"`
	CreatorLiveness *string         `json:"creator_liveness"`
	Path            string          `json:"path"`
	Manifest        *string         `json:"manifest,omitempty"`
}

func (c *reserveLookupCmd) Run(ctx context.Context, streams ioStreams) error {
	s, err := c.store()
	if err != nil {
		return err
	}
	k := c.key()
	out := reserveLookupOutput{Key: c.Key, KeyHash: k.Hash(), State: "free", Record: json.RawMessage("null"), Path: s.RecordPath(k)}
	rec, err := s.Lookup(ctx, k)
	if err != nil {
		return &cli.ExitError{Code: cli.AdminError, Err: err}
	}
	if rec != nil {
		if err := reserve.ValidateRunID(rec.RunID); err != nil {
			return &cli.ExitError{Code: cli.AdminError, Err: &reserve.RecordError{Path: out.Path, Reason: reserve.ErrInvalidRunID,
				Detail: err.Error() + "; inspect the record and move it away by hand"}}
		}
		out.State = "reserved"
		out.Record = rec.Marshal()
		for _, f := range rec.Unknown {
			if out.UnknownFields == nil {
				out.UnknownFields = map[string]any{}
			}
			out.UnknownFields[f.Name] = json.RawMessage(f.Value)
		}
		if out.Published, err = reserve.IsPublished(s.Layout(), rec.RunID); err != nil {
			return &cli.ExitError{Code: cli.AdminError, Err: err}
		}
		live := reserve.CreatorLiveness(rec).String()
		out.CreatorLiveness = &live
		mp := s.Layout().ManifestPath(rec.RunID)
		out.Manifest = &mp
	}
	return writeJSON(streams.Out, out)
}
