package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWaitersSleepWhileTheLeaseIsHeld checks that a waiter does not spin:
// its own failed attempts must not wake its directory watch (they used to,
// and a claim waiter burned most of a core forking stopped children). While
// a holder keeps the lease for about a second, the waiter's back-off grows
// towards its 250 ms cap, about ten attempts; a spinning waiter makes
// hundreds. The bound is generous and counts attempts; the sleep only sets
// how long the holder holds (a slower machine makes fewer attempts).
func TestWaitersSleepWhileTheLeaseIsHeld(t *testing.T) {
	dir := t.TempDir()
	root, env := claimEnv(t)
	_, renv := reserveEnv(t)
	env = append(env, renv...)
	sroot := sessionRoot(t)
	for _, tc := range []struct {
		kind string
		args []string
	}{
		{"claim", []string{"claim", "run", "job", "--root", root}},
		{"reservation", []string{"reserve", "run", "job"}},
		{"session", []string{"session", "run", testSID, "--root", sroot, "--epoch", "6"}},
		{"flock", []string{"flock", "run", filepath.Join(dir, "job.lock")}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			ready, gone := filepath.Join(dir, tc.kind+".ready"), filepath.Join(dir, tc.kind+".gone")
			holder := startLW(t, env, append(tc.args, "--", "sh", "-c", holdUntil(ready, gone))...)
			waitFor(t, "holder's child", func() bool { return exists(ready) })
			waiter := startLW(t, env, append(tc.args, "--wait", "20s", "--log-level", "debug", "--", "true")...)
			waitFor(t, "the waiter to wait", func() bool { return strings.Contains(waiter.stderr.String(), "lease held; waiting") })
			time.Sleep(1200 * time.Millisecond) // the hold whose attempts are counted
			// A loaded machine may not have let the waiter retry yet (a
			// flock waiter never retries: it says it waits for the grant).
			again := "lease still held; retrying"
			if tc.kind == "flock" {
				again = "waiting for the grant"
			}
			waitFor(t, "the waiter to retry", func() bool { return strings.Contains(waiter.stderr.String(), again) })
			os.WriteFile(gone, nil, 0o644)
			if have := holder.wait(t); have != 0 {
				t.Fatalf("holder: want 0, have %d\n%s", have, &holder.stderr)
			}
			if have := waiter.wait(t); have != 0 {
				t.Fatalf("waiter: want 0 (ran, or replayed the published run), have %d\n%s", have, &waiter.stderr)
			}
			attempts := strings.Count(waiter.stderr.String(), "lease still held; retrying")
			if tc.kind == "flock" {
				// The waiter blocks in flock(2), as flock -w does: the
				// kernel's grant is its only wake-up.
				if attempts != 0 || !strings.Contains(waiter.stderr.String(), "waiting for the grant") {
					t.Fatalf("want a flock waiter to block in flock(2) without retrying, have %d retries\n%s", attempts, &waiter.stderr)
				}
				return
			}
			if attempts == 0 || attempts > 40 {
				t.Fatalf("want the waiter to back off (a few attempts), have %d attempts in about a second\n%s", attempts, &waiter.stderr)
			}
			t.Logf("%s waiter: %d attempts", tc.kind, attempts)
		})
	}
}
