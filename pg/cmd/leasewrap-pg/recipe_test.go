package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
)

// recipes are the SQL blocks of docs/POSTGRES.md's "Fencing your own
// writes", as a reader copies them.
func recipes(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../../docs/POSTGRES.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "### Fencing your own writes")
	if !ok {
		t.Fatal("docs/POSTGRES.md has no section Fencing your own writes")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var out []string
	for _, m := range regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(sec, -1) {
		out = append(out, m[1])
	}
	if len(out) != 2 {
		t.Fatalf("want two SQL recipes, have %d", len(out))
	}
	return out
}

// TestFenceRecipes runs the documented recipes with psql, as a job does
// with its LEASEWRAP_FENCE: the holder's fence writes, an older one
// does not.
func TestFenceRecipes(t *testing.T) {
	psql, err := exec.LookPath("psql")
	testutil.Need(t, "psql (Debian postgresql-client, which postgresql-15 brings)", err)
	srv := pgtest.Start(t)
	srv.Exec(t, "CREATE TABLE report (id int PRIMARY KEY, body text NOT NULL, fence bigint NOT NULL)")
	srv.Exec(t, "INSERT INTO report VALUES (1, '', 0)")
	env, pid := tmp(t, "env"), tmp(t, "pid")
	startLW(t, nil, runArgs("nightly", srv.DSN(), nil, "sh", "-c", "env > "+env+"; echo $$ > "+pid+"; exec sleep 60")...)
	readPID(t, pid)
	fence, err := strconv.ParseInt(envOf(readFile(t, env))["LEASEWRAP_FENCE"], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	for i, sql := range recipes(t) {
		file := filepath.Join(t.TempDir(), "recipe.sql")
		os.WriteFile(file, []byte(sql), 0o644)
		run := func(f int64, body string) string {
			out, err := exec.Command(psql, srv.DSN(), "-X", "-v", "ON_ERROR_STOP=1", "-v", "fence="+strconv.FormatInt(f, 10), "-v", "body="+body, "-f", file).CombinedOutput()
			if err != nil {
				t.Fatalf("recipe %d: %v\n%s", i, err, out)
			}
			return strings.TrimSpace(string(out))
		}
		if out := run(fence, "ours"); out != "UPDATE 1" {
			t.Fatalf("recipe %d with the holder's fence: want UPDATE 1, have %q", i, out)
		}
		if out := run(fence-1, "stale"); out != "UPDATE 0" {
			t.Fatalf("recipe %d with an older fence: want UPDATE 0, have %q", i, out)
		}
	}
	var body string
	srv.QueryRow(t, []any{&body}, "SELECT body FROM report WHERE id = 1")
	if body != "ours" {
		t.Fatalf("want the holder's write to stand, have %q", body)
	}
}
