package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease/reserve"
)

// reserveCmd groups the reservation verbs. The admin verbs (lookup, release, hash)
// are one file each; run is in reserve_run.go.
type reserveCmd struct {
	Run     reserveRunCmd     `cmd:"" help:"Run a command at most once per key; replay its result."`
	Lookup  reserveLookupCmd  `cmd:"" help:"Show a key's reservation record, whether its run is published and whether its creator is live (JSON)."`
	Release reserveReleaseCmd `cmd:"" help:"Remove a key's reservation, only if it names --run-id (JSON). Exit 0 released, 1 not owner or absent, 2 error."`
	Hash    reserveHashCmd    `cmd:"" help:"Print a key's record name (the orchestratectl key hash) and path (JSON)."`
}

// reserveKeyFlags are the key and home of every reservation verb.
type reserveKeyFlags struct {
	Key    string `arg:"" help:"The idempotency key, e.g. export-2026-11-29."`
	Repo   string `help:"Source repository the key is scoped to (orchestratectl's source_repo); empty = none."`
	Branch string `help:"Source branch the key is scoped to (orchestratectl's source_branch); empty = none."`
	Home   string `help:"orchestratectl home (default: $ORCHESTRATECTL_HOME, else $HOME/.orchestratectl)." type:"path"`
}

func (f *reserveKeyFlags) key() reserve.Key {
	return reserve.Key{Repo: f.Repo, Branch: f.Branch, Key: f.Key}
}

// store resolves the home and returns its Store, or an admin error.
func (f *reserveKeyFlags) store() (*reserve.Store, error) {
	home, err := reserve.ResolveHome(f.Home, os.Getenv)
	if err != nil {
		return nil, &cli.ExitError{Code: cli.AdminError, Err: err}
	}
	return reserve.NewStore(home), nil
}

// writeJSON writes v as one line of JSON without HTML escaping.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return &cli.ExitError{Code: cli.AdminError, Err: fmt.Errorf("write output: %w", err)}
	}
	return nil
}
