package main

import (
	"log/slog"
	"os"

	"github.com/leasewrap/leasewrap/lease/claim"
)

// claimCmd groups the claim verbs. The admin verbs (acquire, release,
// status, renew, list) are one file each; run is in claim_run.go.
type claimCmd struct {
	Run     claimRunCmd     `cmd:"" help:"Hold a claim while a command runs."`
	Acquire claimAcquireCmd `cmd:"" help:"Take a claim once and print it as JSON (exit 0 acquired, 1 held by another, 2 error)."`
	Release claimReleaseCmd `cmd:"" help:"Release a claim if HOLDER holds it (exit 0; another holder's or a missing claim is left as is)."`
	Status  claimStatusCmd  `cmd:"" help:"Show a key's claim state as JSON: free, live, suspect, stale or corrupted (always exit 0)."`
	Renew   claimRenewCmd   `cmd:"" help:"Extend HOLDER's TTL claim to now + --ttl-ms (exit 0 renewed, 1 not renewed, 2 error)."`
	List    claimListCmd    `cmd:"" help:"List the claims under a root: live and suspect ones, or all with --all."`
}

// claimRootFlag is the --root every admin verb takes.
type claimRootFlag struct {
	Root string `help:"Claims root: the directory holding .fno/claims. Default: node:, dispatch:, reconcile: and session: keys use $FNO_CLAIMS_ROOT, else $HOME; other keys need --root." type:"path" placeholder:"DIR"`
}

// claims returns the protocol handle the admin verbs use. Audit events go
// to ./.fno/events.jsonl, or $FNO_EVENTS_PATH when set.
func (f claimRootFlag) claims(logger *slog.Logger) *claim.Claims {
	return claim.New(claim.Options{Root: f.Root, Getenv: os.Getenv, Logger: logger})
}

// claimHeldOutput is the JSON of a claim held by another holder.
type claimHeldOutput struct {
	Outcome string `json:"outcome"` // "held_by_other"
	Holder  string `json:"holder"`
	PID     int    `json:"pid"`
	Host    string `json:"host"`
}

// claimStatusJSON renders one key's status as the status verb and list
// print it.
func claimStatusJSON(st claim.Status) claim.Metadata {
	out := claim.Metadata{{Key: "key", Value: st.Key}, {Key: "state", Value: string(st.State)}}
	switch {
	case st.State == claim.Corrupted:
		msg := ""
		if st.Err != nil {
			msg = st.Err.Error()
		}
		out = append(out, claim.Field{Key: "error", Value: msg}, claim.Field{Key: "path", Value: st.Path})
	case st.Record != nil:
		r := st.Record
		var mid, exp any
		if r.MachineID != nil {
			mid = *r.MachineID
		}
		if r.ExpiresAt != nil {
			exp = *r.ExpiresAt
		}
		out = append(out,
			claim.Field{Key: "holder", Value: r.Holder},
			claim.Field{Key: "pid", Value: r.PID},
			claim.Field{Key: "host", Value: r.Host},
			claim.Field{Key: "machine_id", Value: mid},
			claim.Field{Key: "acquired_at", Value: r.AcquiredAt},
			claim.Field{Key: "expires_at", Value: exp},
		)
		if r.Reason != nil {
			out = append(out, claim.Field{Key: "reason", Value: *r.Reason})
		}
		if r.Harness != nil {
			out = append(out, claim.Field{Key: "harness", Value: *r.Harness})
		}
		if len(r.Metadata) > 0 {
			out = append(out, claim.Field{Key: "metadata", Value: r.Metadata})
		}
	}
	return out
}
