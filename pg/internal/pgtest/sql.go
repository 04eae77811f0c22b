package pgtest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// queryTimeout bounds every helper query; a hung server fails the test.
var queryTimeout = 20 * time.Second

// Connect opens a pgx connection to dsn, closed when the test ends.
func Connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Scale(queryTimeout))
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", redact(dsn), err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// Exec runs one statement on a fresh connection and fails t on error.
func (s *Server) Exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if err := s.TryExec(sql, args...); err != nil {
		t.Fatalf("%s on %s: %v", sql, s.Addr(), err)
	}
}

// TryExec runs one statement on a fresh connection and returns its error.
func (s *Server) TryExec(sql string, args ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), Scale(queryTimeout))
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DSN())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql, args...)
	return err
}

// QueryRow runs a query that returns one row and scans it into dest,
// failing t on error (pgx.ErrNoRows included).
func (s *Server) QueryRow(t testing.TB, dest []any, sql string, args ...any) {
	t.Helper()
	if err := s.TryQueryRow(dest, sql, args...); err != nil {
		t.Fatalf("%s on %s: %v", sql, s.Addr(), err)
	}
}

// TryQueryRow is QueryRow returning its error.
func (s *Server) TryQueryRow(dest []any, sql string, args ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), Scale(queryTimeout))
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DSN())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return conn.QueryRow(ctx, sql, args...).Scan(dest...)
}

// Query returns every row of a query as values, failing t on error.
func (s *Server) Query(t testing.TB, sql string, args ...any) [][]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Scale(queryTimeout))
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatalf("connect %s: %v", s.Addr(), err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		t.Fatalf("%s on %s: %v", sql, s.Addr(), err)
	}
	var out [][]any
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			t.Fatalf("%s on %s: %v", sql, s.Addr(), err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s on %s: %v", sql, s.Addr(), err)
	}
	return out
}

// BackendPIDs lists the pids of client backends whose application_name is
// appName, or of every other client backend when appName is "".
func (s *Server) BackendPIDs(t testing.TB, appName string) []int {
	t.Helper()
	return s.BackendPIDsWhere(t, "($1 = '' or application_name = $1)", appName)
}

// BackendPIDsWhere lists the pids of client backends (other than the
// query's own) for which the SQL condition cond over pg_stat_activity holds.
func (s *Server) BackendPIDsWhere(t testing.TB, cond string, args ...any) []int {
	t.Helper()
	var pids []int
	for _, r := range s.Query(t, "select pid from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid() and "+cond+" order by pid", args...) {
		pids = append(pids, int(r[0].(int32)))
	}
	return pids
}

// Terminate ends a backend with pg_terminate_backend and reports whether
// the server signalled it.
func (s *Server) Terminate(t testing.TB, pid int) bool {
	t.Helper()
	var ok bool
	s.QueryRow(t, []any{&ok}, "select pg_terminate_backend($1)", pid)
	return ok
}

// Timeline is the server's current WAL timeline, read from the name of the
// current WAL file (pg_control lags until a checkpoint). A server in
// recovery has none: t fails.
func (s *Server) Timeline(t testing.TB) int {
	t.Helper()
	var name string
	s.QueryRow(t, []any{&name}, "select substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)")
	tl, err := strconv.ParseInt(name, 16, 64)
	if err != nil {
		t.Fatalf("timeline %q on %s: %v", name, s.Addr(), err)
	}
	return int(tl)
}

// InRecovery reports pg_is_in_recovery().
func (s *Server) InRecovery(t testing.TB) bool {
	t.Helper()
	var rec bool
	s.QueryRow(t, []any{&rec}, "select pg_is_in_recovery()")
	return rec
}

// redact hides the password of a DSN for messages.
func redact(dsn string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "(unparsable dsn)"
	}
	return fmt.Sprintf("%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}
