package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestTimeout (issue 26): --timeout on a local kind stops the whole job
// (the stop signal, SIGKILL after --kill-grace), settles the lease and
// exits 124, with one line on stderr even under -q; --wait is not part of
// it. --stop-signal QUIT reaches a job that exits cleanly only on QUIT.
func TestTimeout(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "lock")
	for _, tc := range []struct {
		name   string
		flags  []string
		script string
		stdout string
	}{
		{"term-ignored", []string{"--kill-grace", "200ms"}, `trap "" TERM; sleep 60 & wait; sleep 60`, ""},
		{"quit", []string{"--stop-signal", "QUIT"}, `exec 2>/dev/null; trap "echo got QUIT; exit 0" QUIT; trap "" TERM; while :; do sleep 0.02; done`, "got QUIT"},
		{"sigquit-number", []string{"--stop-signal", "3"}, `exec 2>/dev/null; trap "echo got QUIT; exit 0" QUIT; trap "" TERM; while :; do sleep 0.02; done`, "got QUIT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-q", "flock", "run", lock, "--timeout", "300ms"}, tc.flags...)
			have, p := runLW(t, nil, append(args, "--", "sh", "-c", tc.script)...)
			if have != 124 {
				t.Fatalf("want 124, have %d\n%s", have, &p.stderr)
			}
			if lines := strings.Split(strings.TrimSpace(p.stderr.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "--timeout") {
				t.Fatalf("want one line naming --timeout under -q, have:\n%s", &p.stderr)
			}
			if !strings.Contains(p.stdout.String(), tc.stdout) {
				t.Fatalf("want %q from the job, have %q", tc.stdout, &p.stdout)
			}
			// Settled: the lock is free at once.
			if have, p := runLW(t, nil, "flock", "run", lock, "--", "true"); have != 0 {
				t.Fatalf("after the timeout: want the lock free (0), have %d\n%s", have, &p.stderr)
			}
		})
	}
	t.Run("stop-signal-on-stragglers", func(t *testing.T) {
		// What is left of the job after the child exits gets the stop
		// signal too: a straggler that exits only on USR1.
		out := filepath.Join(dir, "straggler")
		script := fmt.Sprintf(`sh -c 'trap "echo got USR1 > %s; exit 0" USR1; trap "" TERM; while :; do sleep 0.02; done' & sleep 0.2`, out)
		if have, p := runLW(t, nil, "flock", "run", lock, "--stop-signal", "usr1", "--kill-grace", "20s", "--", "sh", "-c", script); have != 0 {
			t.Fatalf("want 0, have %d\n%s", have, &p.stderr)
		}
		if got := strings.TrimSpace(readWitness(t, out)); got != "got USR1" {
			t.Fatalf("want the straggler stopped by USR1, have %q", got)
		}
	})
	t.Run("bad-signal", func(t *testing.T) {
		for _, sig := range []string{"KILL", "NOPE", "0", "65", "STOP"} {
			if have, p := runLW(t, nil, "flock", "run", lock, "--stop-signal", sig, "--", "true"); have != 64 || !strings.Contains(p.stderr.String(), "--stop-signal") {
				t.Fatalf("--stop-signal %s: want 64 naming the flag, have %d\n%s", sig, have, &p.stderr)
			}
		}
	})
}

// TestReserveTimeoutIsAFailure (issue 26): a timed-out reserve run is not
// published (the retry runs) unless --publish-failures, then it is, with
// its code (124 for a job that exited 0 on the stop signal), and the retry
// replays it.
func TestReserveTimeoutIsAFailure(t *testing.T) {
	_, env := reserveEnv(t)
	witness := filepath.Join(t.TempDir(), "runs")
	job := fmt.Sprintf(`echo run >> %s; trap "exit 0" TERM; while :; do sleep 0.02; done`, witness)
	for _, tc := range []struct {
		key   string
		flags []string
		retry int
	}{
		{"unpublished", nil, 0},
		{"published", []string{"--publish-failures"}, 124},
	} {
		args := append(append([]string{"reserve", "run", tc.key, "--timeout", "300ms"}, tc.flags...), "--", "sh", "-c", job)
		if have, p := runLW(t, env, args...); have != 124 {
			t.Fatalf("%s: want 124, have %d\n%s", tc.key, have, &p.stderr)
		}
		if have, p := runLW(t, env, "reserve", "run", tc.key, "--", "true"); have != tc.retry {
			t.Fatalf("%s: retry: want %d, have %d\n%s", tc.key, tc.retry, have, &p.stderr)
		}
	}
	if got := readWitness(t, witness); got != "run\nrun\n" {
		t.Fatalf("want the job run twice, have %q", got)
	}
}
