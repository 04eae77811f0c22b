package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
)

func TestOnceReplaysLookupAndRelease(t *testing.T) {
	srv := pgtest.Start(t)
	counter := tmp(t, "count")
	job := []string{"sh", "-c", "echo x >> " + counter + "; exit 0"}
	args := func(extra ...string) []string {
		return append(append([]string{"pg", "once", "migrate", "--dsn", srv.DSN(), "--run-id", "r1"}, extra...), append([]string{"--"}, job...)...)
	}
	for i := range 2 {
		if code, out := runLW(t, nil, args()...); code != 0 {
			t.Fatalf("run %d: want 0, have %d:\n%s", i, code, out)
		}
	}
	if b, _ := os.ReadFile(counter); strings.Count(string(b), "x") != 1 {
		t.Fatalf("want the job run once, have %q", b)
	}
	code, out := runLW(t, nil, "pg", "lookup", "migrate", "--dsn", srv.DSN())
	var row struct {
		State    string `json:"state"`
		RunID    string `json:"run_id"`
		ExitCode *int   `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(out), &row); code != 0 || err != nil || row.State != "done" || row.RunID != "r1" || row.ExitCode == nil || *row.ExitCode != 0 {
		t.Fatalf("lookup: want 0 and state done of run r1 exit 0, have %d %+v (%v):\n%s", code, row, err, out)
	}
	if code, out := runLW(t, nil, "pg", "release", "migrate", "--run-id", "other", "--dsn", srv.DSN()); code != 1 {
		t.Fatalf("release of another run: want 1, have %d:\n%s", code, out)
	}
	if code, out := runLW(t, nil, "pg", "release", "migrate", "--run-id", "r1", "--dsn", srv.DSN()); code != 0 {
		t.Fatalf("release: want 0, have %d:\n%s", code, out)
	}
	if code, out := runLW(t, nil, "pg", "lookup", "migrate", "--dsn", srv.DSN()); code != 1 {
		t.Fatalf("lookup after release: want 1, have %d:\n%s", code, out)
	}
	if code, out := runLW(t, nil, args()...); code != 0 {
		t.Fatalf("run after release: want 0, have %d:\n%s", code, out)
	}
	if b, _ := os.ReadFile(counter); strings.Count(string(b), "x") != 2 {
		t.Fatalf("want the job run again after release, have %q", b)
	}
	// A failure is not published: the next run runs.
	fail := []string{"pg", "once", "flaky", "--dsn", srv.DSN(), "--", "sh", "-c", "echo y >> " + counter + "; exit 3"}
	for i := range 2 {
		if code, out := runLW(t, nil, fail...); code != 3 {
			t.Fatalf("failing run %d: want 3, have %d:\n%s", i, code, out)
		}
	}
	if b, _ := os.ReadFile(counter); strings.Count(string(b), "y") != 2 {
		t.Fatalf("want the failing job run twice, have %q", b)
	}
}
