package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
)

// envOf is the KEY=VALUE lines of an env dump as a map.
func envOf(dump string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(dump, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			m[k] = v
		}
	}
	return m
}

func TestRunHolderAndFenceGrows(t *testing.T) {
	srv := pgtest.Start(t)
	var fences []int64
	for i := range 2 {
		envFile := tmp(t, "env")
		code, out := runLW(t, nil, runArgs("nightly", srv.DSN(), nil, "sh", "-c", "env > "+envFile)...)
		if code != 0 {
			t.Fatalf("run %d: want 0, have %d:\n%s", i, code, out)
		}
		env := envOf(testutil.WaitFile(t, envFile, time.Second))
		f, err := strconv.ParseInt(env["LEASEWRAP_FENCE"], 10, 64)
		if err != nil {
			t.Fatalf("run %d: LEASEWRAP_FENCE %q: %v", i, env["LEASEWRAP_FENCE"], err)
		}
		if env["LEASEWRAP_KIND"] != "pg" || env["LEASEWRAP_KEY"] != "nightly" {
			t.Fatalf("run %d: want LEASEWRAP_KIND=pg LEASEWRAP_KEY=nightly, have %q %q", i, env["LEASEWRAP_KIND"], env["LEASEWRAP_KEY"])
		}
		fences = append(fences, f)
	}
	if fences[0] < 1<<40 || fences[1] <= fences[0] {
		t.Fatalf("want fences from timeline 1 << 40 on, growing; have %v", fences)
	}
	// While a run holds it: holder says so (0) and a second run is 75.
	pidFile := tmp(t, "pid")
	w := startLW(t, nil, runArgs("nightly", srv.DSN(), fast, pidJob(pidFile, 60)...)...)
	readPID(t, pidFile)
	code, out := runLW(t, nil, "pg", "holder", "nightly", "--dsn", srv.DSN())
	if code != 0 {
		t.Fatalf("holder while held: want 0, have %d:\n%s", code, out)
	}
	var row struct {
		Held  bool  `json:"held"`
		Fence int64 `json:"fence"`
	}
	if err := json.Unmarshal([]byte(out), &row); err != nil || !row.Held || row.Fence <= fences[1] {
		t.Fatalf("holder: want held with a fence above %d, have %+v (%v):\n%s", fences[1], row, err, out)
	}
	if code, out := runLW(t, nil, runArgs("nightly", srv.DSN(), nil, "true")...); code != 75 {
		t.Fatalf("second run while held: want 75, have %d:\n%s", code, out)
	}
	w.Cmd.Process.Signal(syscall.SIGTERM)
	w.wait(t, 30*time.Second)
	if code, out := runLW(t, nil, "pg", "holder", "nightly", "--dsn", srv.DSN()); code != 1 {
		t.Fatalf("holder after release: want 1, have %d:\n%s", code, out)
	}
}

func TestPasswordNeverReachesChildOrLog(t *testing.T) {
	srv := pgtest.Start(t)
	envFile := tmp(t, "env")
	code, out := runLW(t, []string{"LWPG_PROBE=kept"}, append([]string{"--log-level", "debug"}, runArgs("pw", srv.DSN(), nil, "sh", "-c", "env > "+envFile)...)...)
	if code != 0 {
		t.Fatalf("want 0, have %d:\n%s", code, out)
	}
	env := testutil.WaitFile(t, envFile, time.Second)
	if strings.Contains(env, pgtest.Password) {
		t.Fatalf("the password given in --dsn reached the child's environment:\n%s", env)
	}
	if envOf(env)["LWPG_PROBE"] != "kept" {
		t.Fatalf("leasewrap's own environment did not reach the child:\n%s", env)
	}
	if strings.Contains(out, pgtest.Password) {
		t.Fatalf("the password was logged:\n%s", out)
	}
}

func TestExitCodesNothingRun(t *testing.T) {
	srv := pgtest.Start(t)
	closed := strings.Replace(srv.DSN(), srv.Addr(), "127.0.0.1:1", 1)
	wrong := strings.Replace(srv.DSN(), pgtest.Password, "wrong-pw", 1)
	for _, tc := range []struct {
		name string
		dsn  string
		want int
	}{
		{"wrong password", wrong, 77},
		{"closed port", closed, 69},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := tmp(t, "ran")
			code, out := runLW(t, nil, runArgs("codes", tc.dsn, []string{"--dial-timeout", "2s"}, "touch", ran)...)
			if code != tc.want {
				t.Fatalf("want %d, have %d:\n%s", tc.want, code, out)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Fatal("the command ran")
			}
			if strings.Contains(out, "wrong-pw") || strings.Contains(out, pgtest.Password) {
				t.Fatalf("a password was printed:\n%s", out)
			}
		})
	}
}
