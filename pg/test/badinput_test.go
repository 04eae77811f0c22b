package test

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
)

// leaseDDL is the lease table as docs/POSTGRES.md gives it, with the
// column list cols (in order) so a test can drop or add one.
var leaseCols = []string{
	"kind text NOT NULL", "name text NOT NULL", "holder text NOT NULL", "fence bigint NOT NULL",
	"state text NOT NULL", "ttl_seconds integer NOT NULL", "acquired_at timestamptz NOT NULL",
	"renewed_at timestamptz NOT NULL", "expires_at timestamptz NOT NULL", "run_id text NOT NULL",
	"exit_code integer", "record jsonb", "schema_version integer NOT NULL",
}

func leaseDDL(cols []string) string {
	return "create table leasewrap_lease (" + strings.Join(cols, ", ") + ", primary key (kind, name))"
}

func without(cols []string, prefix string) []string {
	var out []string
	for _, c := range cols {
		if !strings.HasPrefix(c, prefix+" ") {
			out = append(out, c)
		}
	}
	return out
}

// snapshot is everything a test compares before and after a refused run:
// the table's columns, comment and rows.
func snapshot(t testing.TB, srv *pgtest.Server, table string) string {
	t.Helper()
	cols := srv.Query(t, `select attname::text, format_type(atttypid, atttypmod), attnotnull from pg_attribute
		where attrelid = to_regclass($1) and attnum > 0 and not attisdropped order by attnum`, table)
	var comment *string
	srv.QueryRow(t, []any{&comment}, "select obj_description(to_regclass($1), 'pg_class')", table)
	rows := srv.Query(t, fmt.Sprintf("select to_jsonb(t)::text from %s t order by 1", table))
	c := "<nil>"
	if comment != nil {
		c = *comment
	}
	return fmt.Sprintf("columns %v\ncomment %s\nrows %v", cols, c, rows)
}

// TestBadTableRefused: a table of leasewrap's name that is not its own, or
// not its layout, or a row or table of a newer schema, is refused with 65,
// a message naming the table, nothing run, and the table unchanged.
func TestBadTableRefused(t *testing.T) {
	const leaseComment = "comment on table leasewrap_lease is 'leasewrap lease table, schema 1'"
	newerRow := `insert into leasewrap_lease values ('pg', 'bad', 'someone-newer', 7, 'free', 30,
		statement_timestamp() - interval '1 hour', statement_timestamp() - interval '1 hour', statement_timestamp() - interval '1 hour', '', null, null, 2)`
	for _, c := range []struct {
		name  string
		setup []string
		want  string // in the message
		// prerun runs a wrapper on another name first: the table and its
		// meta row are leasewrap's own, only the row is not.
		prerun bool
	}{
		{"foreign table", []string{
			"create table leasewrap_lease (id int primary key, payload text)",
			"insert into leasewrap_lease values (1, 'theirs'), (2, 'also theirs')",
		}, "leasewrap_lease", false},
		{"missing column", []string{leaseDDL(without(leaseCols, "record")), leaseComment}, "record", false},
		{"extra column", []string{leaseDDL(append(append([]string(nil), leaseCols...), "extra text")), leaseComment}, "extra", false},
		{"unlogged", []string{strings.Replace(leaseDDL(leaseCols), "create table", "create unlogged table", 1), leaseComment}, "UNLOGGED", false},
		{"newer table", []string{leaseDDL(leaseCols), "comment on table leasewrap_lease is 'leasewrap lease table, schema 2'"}, "schema 2", false},
		{"newer row", []string{newerRow}, "schema", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := pgtest.Start(t)
			if c.prerun {
				if code, out := runLW(t, nil, "pg", "run", "other", "--dsn", srv.DSN(), "--ttl", "10s", "--", "true"); code != 0 {
					t.Fatalf("first run: want 0, have %d:\n%s", code, out)
				}
			}
			for _, s := range c.setup {
				srv.Exec(t, s)
			}
			before := snapshot(t, srv, "leasewrap_lease")
			hist := tmp(t, "history")
			code, out := runLW(t, jobEnv(hist, 0), runArgs("bad", srv.DSN(), "--ttl", "10s")...)
			if code != 65 {
				t.Errorf("want exit 65, have %d:\n%s", code, out)
			}
			if !strings.Contains(out, c.want) || !strings.Contains(out, "leasewrap_lease") {
				t.Errorf("want a message naming leasewrap_lease and %q, have:\n%s", c.want, out)
			}
			if strings.Contains(out, pgtest.Password) {
				t.Errorf("the password is in the output:\n%s", out)
			}
			if n := len(readHistory(t, hist).jobs); n != 0 {
				t.Errorf("want nothing run, have %d jobs", n)
			}
			if after := snapshot(t, srv, "leasewrap_lease"); after != before {
				t.Errorf("the refused table changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// TestWrongPasswordAndClosedPort: a refused login is 77 and a closed port
// 69, with nothing run either way.
func TestWrongPasswordAndClosedPort(t *testing.T) {
	srv := pgtest.Start(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	for _, c := range []struct {
		name string
		dsn  string
		want int
	}{
		{"wrong password", "postgres://postgres:not-the-password@" + srv.Addr() + "/postgres?sslmode=disable", 77},
		{"closed port", "postgres://postgres:" + pgtest.Password + "@" + closed + "/postgres?sslmode=disable&connect_timeout=2", 69},
	} {
		t.Run(c.name, func(t *testing.T) {
			hist := tmp(t, "history")
			code, out := runLW(t, jobEnv(hist, 0), runArgs("auth", c.dsn, "--ttl", "10s")...)
			if code != c.want {
				t.Errorf("want exit %d, have %d:\n%s", c.want, code, out)
			}
			if strings.Contains(out, "not-the-password") || strings.Contains(out, pgtest.Password) {
				t.Errorf("a password is in the output:\n%s", out)
			}
			if n := len(readHistory(t, hist).jobs); n != 0 {
				t.Errorf("want nothing run, have %d jobs", n)
			}
		})
	}
}
