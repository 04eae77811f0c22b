package table

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Every statement here is one autocommit statement whose times come from
// the server's statement_timestamp() (never a client clock, never now()
// inside a transaction), so each works unchanged through PgBouncer's
// transaction pooling.

// Channel is the NOTIFY channel a release is announced on; the payload
// is Payload's.
const Channel = "leasewrap_release"

// Payload names one released row on Channel.
func Payload(ident, kind, name string) string { return ident + " " + kind + " " + name }

// timelineSQL is the server's current WAL timeline (PostgreSQL ≥ 10's
// pg_walfile_name; it fails during recovery, on a standby).
const timelineSQL = `('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint`

// MetaKind and the empty name are the row that records the last WAL
// timeline seen (fence), since when (acquired_at), the quarantine's end
// (expires_at) and the largest TTL the table grants (ttl_seconds).
const MetaKind = "meta"

// DefaultMaxTTL is the largest TTL a new table grants (its meta row's
// ttl_seconds); a DBA may change it there.
const DefaultMaxTTL = 5 * time.Minute

// QuarantineMargin is added to the largest TTL for the quarantine after a
// timeline change: room for clock-rate error and the holder's stop.
const QuarantineMargin = 5 * time.Second

// FenceShift places the timeline above the per-name counter: fence =
// max(previous fence + 1, timeline << FenceShift).
const FenceShift = 40

// Meta is what the meta row says, read with the server's timeline.
type Meta struct {
	Timeline    int64         // the server's timeline now
	Seen        int64         // the timeline the meta row records
	MaxTTL      time.Duration // the largest TTL granted
	Quarantined bool          // the quarantine after a timeline change is on
	Until       time.Time     // its end (server time)
	Exists      bool
	Schema      int
	// Previous is the timeline recorded before Observe recorded this one
	// (0: none, or unchanged).
	Previous int64
}

// ReadMeta reads the meta row and the server's timeline in one statement.
func ReadMeta(ctx context.Context, c *pgx.Conn, ident string) (Meta, error) {
	var m Meta
	var seen, ttl, schema *int64
	var until *time.Time
	var q *bool
	err := c.QueryRow(ctx, fmt.Sprintf(`SELECT %[2]s, m.fence, m.ttl_seconds, m.expires_at, m.expires_at > statement_timestamp(), m.schema_version
		FROM (SELECT 1) x LEFT JOIN %[1]s m ON m.kind = '%[3]s' AND m.name = ''`, ident, timelineSQL, MetaKind)).
		Scan(&m.Timeline, &seen, &ttl, &until, &q, &schema)
	if err != nil {
		return m, fmt.Errorf("table %s: read the WAL timeline and the meta row: %w", ident, err)
	}
	if seen != nil {
		m.Exists, m.Seen, m.MaxTTL, m.Until, m.Quarantined, m.Schema = true, *seen, time.Duration(*ttl)*time.Second, *until, *q, int(*schema)
	}
	return m, nil
}

// Observe records the server's timeline in the meta row when it differs
// from the one recorded (or there is none yet) and returns the meta row.
// A change starts the quarantine: nothing is granted for the largest TTL
// plus QuarantineMargin. A first meta row on a timeline above 1 starts
// one too: what a former primary granted cannot be known.
func Observe(ctx context.Context, c *pgx.Conn, ident string) (Meta, error) {
	m, err := ReadMeta(ctx, c, ident)
	if err != nil || (m.Exists && m.Seen == m.Timeline) {
		return m, err
	}
	if m.Exists && m.Schema > SchemaVersion {
		return m, nil // the caller refuses it
	}
	_, err = c.Exec(ctx, fmt.Sprintf(`INSERT INTO %[1]s AS m (kind, name, holder, fence, state, ttl_seconds, acquired_at, renewed_at, expires_at, run_id, schema_version)
		SELECT '%[3]s', '', 'leasewrap:timeline', t.tl, 'meta', $1::int, statement_timestamp(), statement_timestamp(),
			statement_timestamp() + CASE WHEN t.tl > 1 THEN make_interval(secs => $1::int + $2::int) ELSE interval '0' END, '', %[4]d
		FROM (SELECT %[2]s AS tl) t
		ON CONFLICT (kind, name) DO UPDATE SET fence = EXCLUDED.fence, acquired_at = statement_timestamp(), renewed_at = statement_timestamp(),
			expires_at = statement_timestamp() + make_interval(secs => m.ttl_seconds + $2::int)
		WHERE m.fence <> EXCLUDED.fence AND m.schema_version <= %[4]d`, ident, timelineSQL, MetaKind, SchemaVersion),
		int64(DefaultMaxTTL/time.Second), int64(QuarantineMargin/time.Second))
	if err != nil {
		return m, fmt.Errorf("table %s: record the WAL timeline %d: %w", ident, m.Timeline, err)
	}
	prev := m.Seen
	m, err = ReadMeta(ctx, c, ident)
	m.Previous = prev
	return m, err
}

// Acquire takes (kind, name) for holder when it is free, released or
// expired, the meta row records the server's timeline, no quarantine is
// on and ttl is within the table's largest: one INSERT … ON CONFLICT DO
// UPDATE … WHERE. It returns the new fence, or ok false (the caller reads
// the row to say why).
func Acquire(ctx context.Context, c *pgx.Conn, ident, kind, name, holder, runID string, ttl time.Duration) (fence int64, ok bool, err error) {
	secs := int64(ttl / time.Second)
	err = c.QueryRow(ctx, fmt.Sprintf(`INSERT INTO %[1]s AS l (kind, name, holder, fence, state, ttl_seconds, acquired_at, renewed_at, expires_at, run_id, schema_version)
		SELECT $1, $2, $3, t.tl << %[4]d, 'held', $4::int, statement_timestamp(), statement_timestamp(), statement_timestamp() + make_interval(secs => $4::int), $5, %[5]d
		FROM (SELECT %[2]s AS tl) t
		WHERE EXISTS (SELECT 1 FROM %[1]s m WHERE m.kind = '%[3]s' AND m.name = '' AND m.fence = t.tl
			AND m.expires_at <= statement_timestamp() AND m.ttl_seconds >= $4::int AND m.schema_version <= %[5]d)
		ON CONFLICT (kind, name) DO UPDATE SET holder = EXCLUDED.holder, fence = GREATEST(l.fence + 1, EXCLUDED.fence), state = 'held',
			ttl_seconds = EXCLUDED.ttl_seconds, acquired_at = EXCLUDED.acquired_at, renewed_at = EXCLUDED.renewed_at,
			expires_at = EXCLUDED.expires_at, run_id = EXCLUDED.run_id, exit_code = NULL, record = NULL, schema_version = EXCLUDED.schema_version
		WHERE l.schema_version <= %[5]d AND (l.state = 'free' OR (l.state = 'held' AND l.expires_at <= statement_timestamp()))
		RETURNING fence`, ident, timelineSQL, MetaKind, FenceShift, SchemaVersion),
		kind, name, holder, secs, runID).Scan(&fence)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return fence, true, nil
}

// guard is the WHERE of every statement on a held row: ours (holder and
// fence) and held. It never matches a row another holder took since.
const guard = `kind = $1 AND name = $2 AND holder = $3 AND fence = $4 AND state = 'held'`

// Renew extends our row by its TTL from the server's statement time while
// it is ours and unexpired: an UPDATE, never an upsert. ok false is loss.
func Renew(ctx context.Context, c *pgx.Conn, ident, kind, name, holder string, fence int64) (ok bool, err error) {
	tag, err := c.Exec(ctx, fmt.Sprintf(`UPDATE %s SET renewed_at = statement_timestamp(),
		expires_at = statement_timestamp() + make_interval(secs => ttl_seconds)
		WHERE %s AND expires_at > statement_timestamp()`, ident, guard), kind, name, holder, fence)
	return err == nil && tag.RowsAffected() == 1, err
}

// Release frees our row and announces it on Channel in the same
// statement. live also requires it unexpired (a release that must prove
// the lease was still ours). ok false: it was not ours (any more).
func Release(ctx context.Context, c *pgx.Conn, ident, kind, name, holder string, fence int64, live bool) (ok bool, err error) {
	cond := guard
	if live {
		cond += " AND expires_at > statement_timestamp()"
	}
	var n int64
	err = c.QueryRow(ctx, fmt.Sprintf(`WITH u AS (UPDATE %s SET state = 'free', renewed_at = statement_timestamp(), expires_at = statement_timestamp()
		WHERE %s RETURNING 1)
		SELECT count(pg_notify('%s', $5)) FROM u`, ident, cond, Channel), kind, name, holder, fence, Payload(ident, kind, name)).Scan(&n)
	return err == nil && n == 1, err
}

// Publish records a finished run's exit code and record on our row,
// unexpired, and announces it: state done, replayed by later runs.
func Publish(ctx context.Context, c *pgx.Conn, ident, kind, name, holder string, fence int64, exitCode int, record []byte) (ok bool, err error) {
	var n int64
	err = c.QueryRow(ctx, fmt.Sprintf(`WITH u AS (UPDATE %s SET state = 'done', exit_code = $5::int, record = $6::jsonb, renewed_at = statement_timestamp(), expires_at = statement_timestamp()
		WHERE %s AND expires_at > statement_timestamp() RETURNING 1)
		SELECT count(pg_notify('%s', $7)) FROM u`, ident, guard, Channel), kind, name, holder, fence, exitCode, string(record), Payload(ident, kind, name)).Scan(&n)
	return err == nil && n == 1, err
}
