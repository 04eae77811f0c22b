package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
)

// TestWaiterTakesOverOnRelease: a waiter (--wait) runs once the holder
// releases, woken by the release's NOTIFY, and its fence is larger.
func TestWaiterTakesOverOnRelease(t *testing.T) {
	srv := pgtest.Start(t)
	pid1, pid2 := tmp(t, "pid1"), tmp(t, "pid2")
	env1, env2 := tmp(t, "env1"), tmp(t, "env2")
	holder := startLW(t, nil, runArgs("handover", srv.DSN(), fast, "sh", "-c", "env > "+env1+"; echo $$ > "+pid1+".tmp; mv "+pid1+".tmp "+pid1+"; exec sleep 60")...)
	readPID(t, pid1)
	waiter := startLW(t, nil, runArgs("handover", srv.DSN(), append([]string{"--wait", "60s"}, fast...), "sh", "-c", "env > "+env2+"; echo $$ > "+pid2)...)
	holder.Cmd.Process.Signal(syscall.SIGTERM)
	holder.wait(t, 30*time.Second)
	if code := waiter.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("waiter: want 0, have %d:\n%s", code, waiter.out.String())
	}
	f1 := envOf(readFile(t, env1))["LEASEWRAP_FENCE"]
	f2 := envOf(readFile(t, env2))["LEASEWRAP_FENCE"]
	if len(f2) < len(f1) || (len(f2) == len(f1) && f2 <= f1) {
		t.Fatalf("want the waiter's fence above the holder's, have %s then %s", f1, f2)
	}
}

// TestLostWhenTaken: a holder whose row another took (here by hand) is
// stopped at its next renewal and exits 76.
func TestLostWhenTaken(t *testing.T) {
	srv := pgtest.Start(t)
	pid := tmp(t, "pid")
	w := startLW(t, nil, runArgs("lost", srv.DSN(), fast, pidJob(pid, 60)...)...)
	readPID(t, pid)
	srv.Exec(t, "UPDATE leasewrap_lease SET holder = 'someone-else', fence = fence + 1 WHERE name = 'lost'")
	if code := w.wait(t, 30*time.Second); code != 76 {
		t.Fatalf("want 76, have %d:\n%s", code, w.out.String())
	}
	if !strings.Contains(w.out.String(), "someone-else") {
		t.Fatalf("want the loss to name the new holder:\n%s", w.out.String())
	}
}
