package main

import (
	"testing"

	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
)

// TestSlots: --slots 2 lets two holders run at once, each told its slot;
// a third is refused (75); holder --slots 2 shows both held.
func TestSlots(t *testing.T) {
	srv := pgtest.Start(t)
	slots := []string{"--slots", "2"}
	var envs []string
	for range 2 {
		env, pid := tmp(t, "env"), tmp(t, "pid")
		startLW(t, nil, runArgs("build", srv.DSN(), slots, "sh", "-c", "env > "+env+"; echo $$ > "+pid+"; exec sleep 60")...)
		readPID(t, pid)
		envs = append(envs, envOf(readFile(t, env))["LEASEWRAP_SLOT"])
	}
	if !(envs[0] == "0" && envs[1] == "1") && !(envs[0] == "1" && envs[1] == "0") {
		t.Fatalf("want slots 0 and 1, have %q", envs)
	}
	if code, out := runLW(t, nil, runArgs("build", srv.DSN(), slots, "true")...); code != 75 {
		t.Fatalf("a third holder: want 75, have %d:\n%s", code, out)
	}
	if code, out := runLW(t, nil, "pg", "holder", "build", "--slots", "2", "--dsn", srv.DSN()); code != 0 {
		t.Fatalf("holder --slots 2: want 0, have %d:\n%s", code, out)
	}
}
