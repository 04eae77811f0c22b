package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
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

// TestOnceWaiterReplaysTheRunInFlight: a run that finds KEY in flight
// waits (--wait) and then replays its exit code without running; with
// --publish-failures a failure is replayed too.
func TestOnceWaiterReplaysTheRunInFlight(t *testing.T) {
	srv := pgtest.Start(t)
	pid, gone := tmp(t, "pid"), tmp(t, "gone")
	first := startLW(t, nil, "pg", "once", "deploy", "--dsn", srv.DSN(), "--publish-failures", "--",
		"sh", "-c", "echo $$ > "+pid+".tmp; mv "+pid+".tmp "+pid+"; while [ ! -e "+gone+" ]; do sleep 0.05; done; exit 4")
	readPID(t, pid)
	ran := tmp(t, "ran")
	second := startLW(t, nil, "pg", "once", "deploy", "--dsn", srv.DSN(), "--wait", "60s", "--", "touch", ran)
	testutil.WaitFor(t, "the second run to wait", pgtest.Scale(30*time.Second), func() bool {
		return strings.Contains(second.out.String(), "waiting")
	})
	if err := os.WriteFile(gone, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := first.wait(t, 30*time.Second); code != 4 {
		t.Fatalf("first: want its own 4, have %d:\n%s", code, first.out.String())
	}
	if code := second.wait(t, 60*time.Second); code != 4 {
		t.Fatalf("waiter: want the replayed 4, have %d:\n%s", code, second.out.String())
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the waiter ran its command instead of replaying")
	}
}
