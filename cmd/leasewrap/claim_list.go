package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease/claim"
)

// claimListCmd lists the claims of one claims directory.
type claimListCmd struct {
	claimRootFlag
	Prefix string `help:"Only keys starting with this prefix." placeholder:"P"`
	All    bool   `help:"Include stale and corrupted claim files (default: live and suspect only)."`
	JSON   bool   `name:"json" help:"Print a JSON array (the status objects of 'claim status') instead of a table."`
}

func (c *claimListCmd) Help() string {
	return `Lists the claims in <root>/.fno/claims, where root is --root, else
$FNO_CLAIMS_ROOT, else $HOME. By default only claims that protect their key
(live and suspect) are shown; --all adds stale claims (reclaimable) and
corrupted files (which need a person). Keys are sorted. Exit 0, or 2 if the
directory cannot be read.

Every *.lock entry is listed as it is on disk, one row each, under the key
its file name encodes; an entry that does not belong is flagged in PROBLEM
(--json: "problem" and "path"): a file whose name does not match the key in
its record (a copy), a name that is not a key encoding, or something that is
not a regular file (a directory, a symlink).

Without --json the output is a table for people:
  KEY  STATE  HOLDER  PID  HOST  EXPIRES  REASON  PROBLEM
Values with tabs, newlines or non-ASCII characters are shown quoted, so
columns stay aligned. With --json it is one JSON array of the objects
'claim status' prints, plus "problem" where there is one.

Examples:
  leasewrap claim list
  leasewrap claim list --prefix dispatch: --all
  leasewrap claim list --root "$PWD" --json | jq -r '.[].key'`
}

func (c *claimListCmd) Run(ctx context.Context, logger *slog.Logger, streams ioStreams) error {
	entries, err := c.claims(logger).List(c.Prefix)
	if err != nil {
		return &cli.ExitError{Code: cli.AdminError, Err: err}
	}
	var shown []claim.Listed
	for _, st := range entries {
		if c.All || st.State == claim.Live || st.State == claim.Suspect {
			shown = append(shown, st)
		}
	}
	if c.JSON {
		arr := make([]claim.Metadata, 0, len(shown))
		for _, st := range shown {
			obj := claimStatusJSON(st.Status)
			if st.Problem != "" {
				if st.State != claim.Corrupted {
					obj = append(obj, claim.Field{Key: "path", Value: st.Path})
				}
				obj = append(obj, claim.Field{Key: "problem", Value: st.Problem})
			}
			arr = append(arr, obj)
		}
		return writeJSON(streams.Out, arr)
	}
	tw := tabwriter.NewWriter(streams.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tSTATE\tHOLDER\tPID\tHOST\tEXPIRES\tREASON\tPROBLEM")
	now := time.Now()
	for _, st := range shown {
		prob := st.Problem
		if prob != "" {
			prob += " (" + st.Path + ")"
		}
		if st.Record == nil {
			if prob == "" {
				prob = st.Path
			}
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\t%s\n", cell(st.Key), st.State, cell(prob))
			continue
		}
		r := st.Record
		exp, reason := "-", ""
		if r.ExpiresAt != nil {
			exp = time.UnixMilli(*r.ExpiresAt).Sub(now).Round(time.Second).String()
		}
		if r.Reason != nil {
			reason = *r.Reason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(st.Key), st.State, cell(r.Holder), strconv.Itoa(r.PID),
			cell(r.Host), exp, cell(reason), cell(prob))
	}
	return tw.Flush()
}
