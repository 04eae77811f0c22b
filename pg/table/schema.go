package table

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leasewrap/leasewrap/lease"
)

// SchemaVersion is the version of the table's layout this leasewrap
// writes; a row or a table of a newer one is refused, never overwritten.
const SchemaVersion = 1

// DefaultName is the table --table defaults to.
const DefaultName = "leasewrap_lease"

// comment marks a table as leasewrap's (COMMENT ON TABLE).
const comment = "leasewrap lease table, schema 1"

var commentRE = regexp.MustCompile(`^leasewrap lease table, schema ([0-9]+)`)

// DDL is the statement that creates the table (name already quoted).
// Rows are never deleted: a row keeps its name's fence counter.
func DDL(name string) string {
	return fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
    kind           text        NOT NULL,
    name           text        NOT NULL,
    holder         text        NOT NULL,
    fence          bigint      NOT NULL,
    state          text        NOT NULL,
    ttl_seconds    integer     NOT NULL,
    acquired_at    timestamptz NOT NULL,
    renewed_at     timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    run_id         text        NOT NULL,
    exit_code      integer,
    record         jsonb,
    schema_version integer     NOT NULL,
    PRIMARY KEY (kind, name)
)`, name)
}

// Comment is the statement that marks the table as leasewrap's.
func Comment(name string) string {
	return fmt.Sprintf("COMMENT ON TABLE %s IS '%s'", name, comment)
}

// columns are the table's columns and their types (format_type).
var columns = [][2]string{
	{"kind", "text"}, {"name", "text"}, {"holder", "text"}, {"fence", "bigint"}, {"state", "text"},
	{"ttl_seconds", "integer"}, {"acquired_at", "timestamp with time zone"}, {"renewed_at", "timestamp with time zone"},
	{"expires_at", "timestamp with time zone"}, {"run_id", "text"}, {"exit_code", "integer"}, {"record", "jsonb"},
	{"schema_version", "integer"},
}

// Ident is a table name as --table gives it, "name" or "schema.name",
// quoted for SQL.
func Ident(table string) (string, error) {
	parts := strings.Split(table, ".")
	if len(parts) > 2 || table == "" {
		return "", fmt.Errorf("--table %q: want NAME or SCHEMA.NAME", table)
	}
	for _, p := range parts {
		if p == "" || len(p) > 63 {
			return "", fmt.Errorf("--table %q: each part must be 1 to 63 bytes", table)
		}
	}
	return pgx.Identifier(parts).Sanitize(), nil
}

// Ensure creates the table when it does not exist, and checks that the
// table of that name is leasewrap's: an ordinary logged table with
// exactly our columns and primary key, and no newer schema. A table that
// is not is refused (lease.ErrRefused) and nothing is written to it.
func Ensure(ctx context.Context, c *pgx.Conn, ident string) error {
	for attempt := 0; ; attempt++ {
		err := Check(ctx, c, ident)
		if !errors.Is(err, ErrAbsent) {
			return err
		}
		if attempt > 0 {
			return fmt.Errorf("table %s: created, but not found again (search_path?)", ident)
		}
		if err := create(ctx, c, ident); err != nil {
			return err
		}
	}
}

// ErrAbsent is Check's answer for a table that does not exist.
var ErrAbsent = errors.New("table: absent")

func create(ctx context.Context, c *pgx.Conn, ident string) error {
	_, err := c.Exec(ctx, DDL(ident))
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42P07" || pe.Code == "42710") {
		return nil // created meanwhile by another wrapper: check it
	}
	if err != nil {
		return fmt.Errorf("create table %s: %w", ident, err)
	}
	// Best effort: a table made by the DDL above is ours whatever its
	// comment; a DBA's copy of it may lack one.
	_, _ = c.Exec(ctx, Comment(ident))
	return nil
}

// Check is Ensure's test of the table of that name, without creating it:
// ErrAbsent when there is none.
func Check(ctx context.Context, c *pgx.Conn, ident string) error {
	var kind, persistence string
	var desc *string
	err := c.QueryRow(ctx, `SELECT c.relkind::text, c.relpersistence::text, obj_description(c.oid, 'pg_class')
		FROM pg_class c WHERE c.oid = to_regclass($1)`, ident).Scan(&kind, &persistence, &desc)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrAbsent
	}
	if err != nil {
		return fmt.Errorf("table %s: read its definition: %w", ident, err)
	}
	refuse := func(why string) error {
		return fmt.Errorf("%w: table %s is not leasewrap's: %s; nothing was written to it (choose another --table, or see docs/POSTGRES.md for the DDL)", lease.ErrRefused, ident, why)
	}
	if kind != "r" {
		return refuse("not an ordinary table (relkind " + kind + ")")
	}
	if persistence != "p" {
		return refuse("UNLOGGED or temporary: its rows would not survive a crash or reach a standby")
	}
	if desc != nil {
		m := commentRE.FindStringSubmatch(*desc)
		if m == nil {
			return refuse(fmt.Sprintf("its comment is %q", *desc))
		}
		if v, _ := strconv.Atoi(m[1]); v > SchemaVersion {
			return fmt.Errorf("%w: table %s has leasewrap schema %d, newer than this leasewrap's %d; upgrade leasewrap, nothing was written", lease.ErrRefused, ident, v, SchemaVersion)
		}
	}
	rows, err := c.Query(ctx, `SELECT a.attname::text, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
		WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, ident)
	if err != nil {
		return fmt.Errorf("table %s: read its columns: %w", ident, err)
	}
	have := map[string]string{}
	for rows.Next() {
		var n, t string
		if err := rows.Scan(&n, &t); err != nil {
			return err
		}
		have[n] = t
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("table %s: read its columns: %w", ident, err)
	}
	for _, col := range columns {
		t, ok := have[col[0]]
		switch {
		case !ok:
			return refuse("column " + col[0] + " is missing")
		case t != col[1]:
			return refuse(fmt.Sprintf("column %s is %s, not %s", col[0], t, col[1]))
		}
		delete(have, col[0])
	}
	for n := range have {
		return refuse("it has a column " + n + " leasewrap does not know")
	}
	var pk string
	err = c.QueryRow(ctx, `SELECT coalesce(string_agg(a.attname::text, ',' ORDER BY k.ord), '')
		FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
		WHERE i.indrelid = to_regclass($1) AND i.indisprimary`, ident).Scan(&pk)
	if err != nil {
		return fmt.Errorf("table %s: read its primary key: %w", ident, err)
	}
	if pk != "kind,name" {
		return refuse(fmt.Sprintf("its primary key is (%s), not (kind, name)", pk))
	}
	return nil
}
