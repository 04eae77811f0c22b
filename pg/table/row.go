package table

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Row is one lease row as the holder and lookup verbs show it.
type Row struct {
	Kind          string          `json:"kind"`
	Name          string          `json:"name"`
	Holder        string          `json:"holder"`
	Fence         int64           `json:"fence"`
	State         string          `json:"state"` // held, free, done
	TTLSeconds    int             `json:"ttl_seconds"`
	AcquiredAt    time.Time       `json:"acquired_at"`
	RenewedAt     time.Time       `json:"renewed_at"`
	ExpiresAt     time.Time       `json:"expires_at"`
	RunID         string          `json:"run_id,omitempty"`
	ExitCode      *int            `json:"exit_code,omitempty"`
	Record        *map[string]any `json:"record,omitempty"`
	SchemaVersion int             `json:"schema_version"`
	// Live is state held and expires_at after the server's statement time.
	Live bool `json:"live"`
	// ServerTime is the server's statement time of the read.
	ServerTime time.Time `json:"server_time"`
}

// Read returns the row of (kind, name), or nil when there is none.
func Read(ctx context.Context, c *pgx.Conn, ident, kind, name string) (*Row, error) {
	r := &Row{}
	err := c.QueryRow(ctx, fmt.Sprintf(`SELECT kind, name, holder, fence, state, ttl_seconds, acquired_at, renewed_at, expires_at,
		run_id, exit_code, record, schema_version, state = 'held' AND expires_at > statement_timestamp(), statement_timestamp()
		FROM %s WHERE kind = $1 AND name = $2`, ident), kind, name).
		Scan(&r.Kind, &r.Name, &r.Holder, &r.Fence, &r.State, &r.TTLSeconds, &r.AcquiredAt, &r.RenewedAt, &r.ExpiresAt,
			&r.RunID, &r.ExitCode, &r.Record, &r.SchemaVersion, &r.Live, &r.ServerTime)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("table %s: read %s %q: %w", ident, kind, name, err)
	}
	return r, nil
}

// ReleaseRun frees a once row that run runID finished (state done), or
// that it held and that expired, so the next run runs again. ok false:
// there was no such row.
func ReleaseRun(ctx context.Context, c *pgx.Conn, ident, kind, name, runID string) (ok bool, err error) {
	tag, err := c.Exec(ctx, fmt.Sprintf(`UPDATE %s SET state = 'free', exit_code = NULL, record = NULL, renewed_at = statement_timestamp(), expires_at = statement_timestamp()
		WHERE kind = $1 AND name = $2 AND run_id = $3 AND schema_version <= %d
		AND (state = 'done' OR (state = 'held' AND expires_at <= statement_timestamp()))`, ident, SchemaVersion), kind, name, runID)
	return err == nil && tag.RowsAffected() == 1, err
}
