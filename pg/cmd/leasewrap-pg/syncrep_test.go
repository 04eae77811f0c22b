package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
)

// TestCancelledSyncRepWaitIsNotAcquired: with a synchronous standby
// required (and none there), every commit waits; a wait cancelled on the
// server ("committed locally, but might not have been replicated") is not
// an acquisition: nothing runs, exit 69.
func TestCancelledSyncRepWaitIsNotAcquired(t *testing.T) {
	srv := pgtest.Start(t)
	if code, out := runLW(t, nil, runArgs("setup", srv.DSN(), nil, "true")...); code != 0 {
		t.Fatalf("setup: want 0, have %d:\n%s", code, out)
	}
	srv.Exec(t, "ALTER SYSTEM SET synchronous_standby_names = '*'")
	srv.Exec(t, "SELECT pg_reload_conf()")
	ran := tmp(t, "ran")
	w := startLW(t, nil, runArgs("sync", srv.DSN(), nil, "touch", ran)...)
	deadline := time.Now().Add(pgtest.Scale(60 * time.Second))
	for w.Running() && time.Now().Before(deadline) {
		// Cancel every commit waiting for the standby, as an operator or
		// a statement timeout in a pooler would.
		srv.Exec(t, "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'")
		select {
		case <-w.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	if code := w.wait(t, time.Second); code != 69 {
		t.Fatalf("want 69, have %d:\n%s", code, w.out.String())
	}
	if !strings.Contains(w.out.String(), "might not have been replicated") {
		t.Fatalf("want the reason named:\n%s", w.out.String())
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the command ran on an unreplicated acquisition")
	}
}
