package main

import (
	"os"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
	"github.com/leasewrap/leasewrap/pg/table"
)

// TestRefusedTablesAndRows: a table of that name that is not leasewrap's,
// a row of a newer schema and a TTL above the table's largest are each
// refused with their exit code; nothing runs and nothing is written.
func TestRefusedTablesAndRows(t *testing.T) {
	srv := pgtest.Start(t)
	srv.Exec(t, `CREATE TABLE shedlock (name text PRIMARY KEY, lock_until timestamptz, locked_at timestamptz, locked_by text)`)
	srv.Exec(t, strings.Replace(table.DDL("extra"), "schema_version integer     NOT NULL,", "schema_version integer NOT NULL, note text,", 1))
	srv.Exec(t, strings.Replace(table.DDL("missing"), "record         jsonb,", "", 1))
	srv.Exec(t, "CREATE UNLOGGED TABLE unlogged (LIKE extra)")
	for _, tc := range []struct{ table, want string }{
		{"shedlock", "column kind is missing"},
		{"extra", "column note"},
		{"missing", "column record is missing"},
		{"unlogged", "UNLOGGED"},
	} {
		ran := tmp(t, "ran")
		code, out := runLW(t, nil, runArgs("job", srv.DSN(), []string{"--table", tc.table}, "touch", ran)...)
		if code != 65 || !strings.Contains(out, tc.want) {
			t.Fatalf("table %s: want 65 saying %q, have %d:\n%s", tc.table, tc.want, code, out)
		}
		if _, err := os.Stat(ran); err == nil {
			t.Fatalf("table %s: the command ran", tc.table)
		}
	}
	var n int
	srv.QueryRow(t, []any{&n}, "SELECT count(*) FROM shedlock")
	if n != 0 {
		t.Fatalf("want nothing written to the foreign table, have %d rows", n)
	}

	// A row of a newer schema is refused, never overwritten.
	if code, out := runLW(t, nil, runArgs("newer", srv.DSN(), nil, "true")...); code != 0 {
		t.Fatalf("first run: want 0, have %d:\n%s", code, out)
	}
	srv.Exec(t, "UPDATE leasewrap_lease SET schema_version = 2, holder = 'future' WHERE name = 'newer'")
	ran := tmp(t, "ran")
	if code, out := runLW(t, nil, runArgs("newer", srv.DSN(), nil, "touch", ran)...); code != 65 || !strings.Contains(out, "schema 2") {
		t.Fatalf("newer row: want 65 naming schema 2, have %d:\n%s", code, out)
	}
	var holder string
	srv.QueryRow(t, []any{&holder}, "SELECT holder FROM leasewrap_lease WHERE name = 'newer'")
	if _, err := os.Stat(ran); err == nil || holder != "future" {
		t.Fatalf("newer row: want nothing run and the row untouched, have holder %q", holder)
	}

	// A TTL above the table's largest is usage, with the reason.
	if code, out := runLW(t, nil, runArgs("long", srv.DSN(), []string{"--ttl", "10m"}, "touch", ran)...); code != 64 || !strings.Contains(out, "largest TTL") {
		t.Fatalf("--ttl 10m: want 64 naming the largest TTL, have %d:\n%s", code, out)
	}
}
