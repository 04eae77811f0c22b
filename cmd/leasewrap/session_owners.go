package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease/session"
)

// sessionOwnersCmd lists a session's owner records with their liveness,
// read-only (the probe try-locks and releases); bad records show their error.
type sessionOwnersCmd struct {
	sessionFlags
	JSON bool `name:"json" help:"Print a JSON array for scripts instead of a table."`
}

// Validate checks the session id and that a root was given (exit 2, the
// admin verbs' usage code, through cli.UsageCode).
func (c *sessionOwnersCmd) Validate() error { return c.sessionFlags.check() }

// sessionOwnerJSON is one element of `session owners --json`. Every key is
// always present; unknown values are null.
type sessionOwnerJSON struct {
	Token              *string `json:"token"`
	PID                *uint32 `json:"pid"`
	Liveness           string  `json:"liveness"`
	SchemaVersion      *uint32 `json:"schema_version"`
	StorageWriterEpoch *uint32 `json:"storage_writer_epoch"`
	DaemonInstanceID   *string `json:"daemon_instance_id"`
	DaemonNamespace    *string `json:"daemon_namespace"`
	BuildFingerprint   *string `json:"build_fingerprint"`
	ProtocolVersion    *uint32 `json:"protocol_version"`
	Endpoint           *string `json:"endpoint"`
	ExecutablePath     *string `json:"executable_path"`
	AcquiredAtMs       *uint64 `json:"acquired_at_ms"`
	AcquiredAt         *string `json:"acquired_at"`
	LastSeenMs         *uint64 `json:"last_seen_ms"`
	Path               string  `json:"path"`
	Error              *string `json:"error"`
	// Problem flags a record not named TOKEN.json or of another session.
	Problem *string `json:"problem"`
}

func (c *sessionOwnersCmd) Run(streams ioStreams) error {
	recs, err := session.NewStore(c.Root).Inspect(c.sid)
	if err != nil {
		return &cli.ExitError{Code: cli.AdminError, Err: err}
	}
	out := make([]sessionOwnerJSON, 0, len(recs))
	for _, r := range recs {
		out = append(out, ownerJSON(r, c.sid))
	}
	if c.JSON {
		return writeJSON(streams.Out, out)
	}
	return writeOwnersTable(streams.Out, c.sid, c.Root, out)
}

func ownerJSON(r session.Record, sid session.ID) sessionOwnerJSON {
	j := sessionOwnerJSON{Liveness: r.Liveness.String(), Path: r.Path}
	if r.Err != nil {
		msg := r.Err.Error()
		j.Error = &msg
		return j
	}
	o := r.Owner
	at := time.UnixMilli(int64(o.AcquiredAtMs)).UTC().Format("2006-01-02T15:04:05.000Z07:00")
	j.Token, j.PID, j.SchemaVersion = &o.LeaseToken, &o.PID, &o.SchemaVersion
	j.StorageWriterEpoch, j.DaemonInstanceID = o.StorageWriterEpoch, o.DaemonInstanceID
	j.DaemonNamespace, j.BuildFingerprint, j.ProtocolVersion = o.DaemonNamespace, o.BuildFingerprint, o.ProtocolVersion
	j.Endpoint, j.ExecutablePath = o.Endpoint, o.ExecutablePath
	j.AcquiredAtMs, j.AcquiredAt, j.LastSeenMs = &o.AcquiredAtMs, &at, &o.LastSeenMs
	var problems []string
	if name := filepath.Base(r.Path); name != o.LeaseToken+".json" {
		problems = append(problems, fmt.Sprintf("file name does not match token: the record's file is %s.json", o.LeaseToken))
	}
	if o.SessionID != sid {
		problems = append(problems, fmt.Sprintf("session_id %s is not this session's", o.SessionID))
	}
	if len(problems) > 0 {
		p := strings.Join(problems, "; ")
		j.Problem = &p
	}
	return j
}

func writeOwnersTable(w io.Writer, sid session.ID, root string, rows []sessionOwnerJSON) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintf(w, "no owner records for session %s under %s\n", sid, root)
		return err
	}
	// One line per record, every value through cell().
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOKEN\tPID\tLIVENESS\tSCHEMA\tEPOCH\tINSTANCE\tACQUIRED\tPATH\tPROBLEM")
	for _, r := range rows {
		if r.Error != nil {
			fmt.Fprintf(tw, "-\t-\t%s\t-\t-\t-\t-\t%s\t%s\n", r.Liveness, cell(r.Path), cell("error: "+*r.Error))
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", cell(*r.Token), *r.PID, r.Liveness, *r.SchemaVersion,
			optU32(r.StorageWriterEpoch), cell(optStr(r.DaemonInstanceID)), *r.AcquiredAt, cell(r.Path), cell(optStr(r.Problem)))
	}
	return tw.Flush()
}

func optU32(v *uint32) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatUint(uint64(*v), 10)
}

func optStr(v *string) string {
	if v == nil {
		return "-"
	}
	return *v
}
