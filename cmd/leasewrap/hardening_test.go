package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// --publish-failures does not record a run stopped by a signal leasewrap
// passed on (a shutdown) as the key's permanent result (issue 17): a
// retry runs again. --publish-signalled asks for it, and then a retry
// replays it.
func TestReservePublishFailuresSkipsAShutdown(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		want  int // the retry's status
	}{
		{"publish-failures", []string{"--publish-failures"}, 0},
		{"publish-signalled", []string{"--publish-failures", "--publish-signalled"}, 143},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, env := reserveEnv(t)
			ready := filepath.Join(t.TempDir(), "ready")
			args := append(append([]string{"reserve", "run", "shutdown"}, tc.flags...), "--", "sh", "-c", "touch "+ready+"; sleep 60")
			p := startLW(t, env, args...)
			waitFor(t, "the job to start", func() bool { return exists(ready) })
			p.Cmd.Process.Signal(syscall.SIGTERM)
			if have := p.wait(t); have != 143 {
				t.Fatalf("want 143, have %d\n%s", have, &p.stderr)
			}
			have, retry := runLW(t, env, append(append([]string{"reserve", "run", "shutdown"}, tc.flags...), "--", "true")...)
			if have != tc.want {
				t.Fatalf("retry: want %d, have %d\n%s", tc.want, have, &retry.stderr)
			}
		})
	}
	_, env := reserveEnv(t)
	if have, p := runLW(t, env, "reserve", "run", "k", "--publish-signalled", "--", "true"); have != 64 {
		t.Fatalf("--publish-signalled alone: want 64, have %d\n%s", have, &p.stderr)
	}
}

// Zero means zero (issue 17): --kill-grace 0s is honoured, not read as
// unset (10 s): what is left of the job after the command exits gets
// SIGKILL at once, even a process that ignores SIGTERM.
func TestClaimRunZeroKillGrace(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	pidf := filepath.Join(dir, "stray")
	script := `sh -c 'trap "" TERM; echo $$ > ` + pidf + `.tmp; mv ` + pidf + `.tmp ` + pidf + `; exec sleep 30' & while [ ! -s ` + pidf + ` ]; do sleep 0.01; done; exit 0`
	have, p := runLW(t, nil, "claim", "run", "zero-grace", "--root", root, "--kill-grace", "0s", "--", "sh", "-c", script)
	if have != 0 {
		t.Fatalf("want 0, have %d\n%s", have, &p.stderr)
	}
	stray := testutil.ReadPID(t, pidf, 5*time.Second)
	if alive(stray) {
		t.Fatalf("stray %d still runs after leasewrap exited", stray)
	}
	if !strings.Contains(p.stderr.String(), "how=SIGKILL") {
		t.Fatalf("want the stray killed at once (how=SIGKILL):\n%s", &p.stderr)
	}
	if _, err := os.Stat(filepath.Join(root, ".fno", "claims", "zero-grace.lock")); !os.IsNotExist(err) {
		t.Fatalf("want the claim released, have %v", err)
	}
}

// A waiter names whom it waits for, and since when (issue 17, 18): the
// holder, its pid and when it took the claim, in its first "waiting" line.
func TestClaimWaiterNamesTheHolder(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	ready, gone := filepath.Join(dir, "ready"), filepath.Join(dir, "gone")
	holder := startLW(t, nil, "claim", "run", "busy", "--root", root, "--holder", "first", "--", "sh", "-c", holdUntil(ready, gone))
	waitFor(t, "the holder's job", func() bool { return exists(ready) })
	have, p := runLW(t, nil, "claim", "run", "busy", "--root", root, "--wait", "300ms", "--", "true")
	os.WriteFile(gone, nil, 0o644)
	if have != 75 {
		t.Fatalf("want 75, have %d\n%s", have, &p.stderr)
	}
	for _, want := range []string{"lease held; waiting", "holder=first", "holder_pid=", "held_since="} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Fatalf("want %q in the waiter's log:\n%s", want, &p.stderr)
		}
	}
	if code := holder.wait(t); code != 0 {
		t.Fatalf("holder: want 0, have %d\n%s", code, &holder.stderr)
	}
}
