package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// pingServer is a loopback HTTP server that records the paths it is
// pinged on, with what check said at each ping.
type pingServer struct {
	*httptest.Server
	mu    sync.Mutex
	pings []string
}

func newPingServer(t *testing.T, check func(path string) string) *pingServer {
	t.Helper()
	s := &pingServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.pings = append(s.pings, r.URL.Path+" "+check(r.URL.Path))
		s.mu.Unlock()
		fmt.Fprintln(w, "OK")
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *pingServer) recorded() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.pings...)
}

// flockFree reports whether path's flock can be taken now (and lets it go).
func flockFree(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil
}

// TestHookPingRecipe runs the README's healthchecks.io recipe as it is
// written, curl included, against a loopback server that records the
// pings: /start once the lock is held and before the command ran, then
// /EXIT_CODE once the command is over and the lock released.
func TestHookPingRecipe(t *testing.T) {
	_, err := exec.LookPath("curl")
	testutil.Need(t, "curl", err)
	dir := t.TempDir()
	lock, marker := filepath.Join(dir, "job.lock"), filepath.Join(dir, "ran")
	srv := newPingServer(t, func(string) string {
		return fmt.Sprintf("ran=%v free=%v", exists(marker), flockFree(lock))
	})
	for _, tc := range []struct {
		exit string
		want int
	}{{"0", 0}, {"3", 3}} {
		os.Remove(marker)
		before := len(srv.recorded())
		code, p := runLW(t, []string{"URL=" + srv.URL}, "flock", "run", lock,
			"--on-start", "curl -fsS -m 10 --retry 3 $URL/start",
			"--on-exit", "curl -fsS -m 10 --retry 3 $URL/$LEASEWRAP_EXIT_CODE",
			"--", "sh", "-c", "touch "+marker+"; exit "+tc.exit)
		if code != tc.want {
			t.Fatalf("want %d, have %d\n%s", tc.want, code, &p.stderr)
		}
		have := strings.Join(srv.recorded()[before:], "; ")
		want := "/start ran=false free=false; /" + tc.exit + " ran=true free=true"
		if have != want {
			t.Fatalf("want pings %q, have %q\n%s", want, have, &p.stderr)
		}
	}
}

// TestHookEnvironment: each hook sees the command's lease environment
// (without the descriptor) and the outcome.
func TestHookEnvironment(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "job.lock")
	dump := func(name string) string {
		return "env | grep ^LEASEWRAP_ | grep -v ^LEASEWRAP_PID= | sort > " + filepath.Join(dir, name)
	}
	code, p := runLW(t, nil, "flock", "run", lock, "--holder", "me", "--on-start", dump("start"), "--on-exit", dump("exit"), "--", "sh", "-c", "exit 7")
	if code != 7 {
		t.Fatalf("want 7, have %d\n%s", code, &p.stderr)
	}
	start, _ := os.ReadFile(filepath.Join(dir, "start"))
	exit, _ := os.ReadFile(filepath.Join(dir, "exit"))
	common := "LEASEWRAP_HOLDER=me\nLEASEWRAP_KEY=" + lock + "\nLEASEWRAP_KIND=flock\n"
	if want := common + "LEASEWRAP_OUTCOME=started\n"; string(start) != want {
		t.Fatalf("on-start: want\n%s\nhave\n%s", want, start)
	}
	lines := strings.Split(strings.TrimSpace(string(exit)), "\n")
	var dur string
	var rest []string
	for _, l := range lines {
		if v, ok := strings.CutPrefix(l, "LEASEWRAP_DURATION_SECONDS="); ok {
			dur = v
			continue
		}
		rest = append(rest, l)
	}
	if want := "LEASEWRAP_EXIT_CODE=7\n" + common + "LEASEWRAP_OUTCOME=ran"; strings.Join(rest, "\n") != want {
		t.Fatalf("on-exit: want\n%s\nhave\n%s", want, exit)
	}
	if _, err := strconv.ParseFloat(dur, 64); err != nil {
		t.Fatalf("on-exit: want LEASEWRAP_DURATION_SECONDS a number, have %q", dur)
	}
}

// TestHookFailuresChangeNothing: hooks that fail, or hang past
// --hook-timeout (their process group killed), are logged; the command
// runs and its status is leasewrap's. Under -q a hook's output is shown
// only when it fails.
func TestHookFailuresChangeNothing(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "job.lock")
	pidFile := filepath.Join(dir, "hook.pid")
	for _, tc := range []struct {
		name        string
		args        []string
		wantErr     []string
		wantSilence bool
	}{
		{"exit 1", []string{"--on-start", "echo start-said; exit 1", "--on-exit", "echo exit-said; exit 2"},
			[]string{"start-said", "exit-said", "on-start hook failed", "exited with status 1", "on-exit hook failed", "exited with status 2"}, false},
		{"quiet and fine", []string{"-q", "--on-start", "echo start-said", "--on-exit", "echo exit-said"}, nil, true},
		{"quiet and failing", []string{"-q", "--on-start", "echo start-said; exit 1"}, []string{"start-said", "on-start hook failed"}, false},
		{"hung", []string{"--hook-timeout", "300ms", "--on-start", "sleep 1000 & echo $! > " + pidFile + "; wait"},
			[]string{"on-start hook failed", "killed at the hook timeout (300ms)"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"flock", "run", lock}
			if tc.args[0] == "-q" {
				args = append([]string{"-q"}, args...)
				tc.args = tc.args[1:]
			}
			args = append(append(args, tc.args...), "--", "sh", "-c", "echo cmd-ran; exit 4")
			code, p := runLW(t, nil, args...)
			if code != 4 {
				t.Fatalf("want the command's 4, have %d\n%s", code, &p.stderr)
			}
			if p.stdout.String() != "cmd-ran\n" {
				t.Fatalf("want the command run, have stdout %q", &p.stdout)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(p.stderr.String(), w) {
					t.Fatalf("want %q on stderr, have\n%s", w, &p.stderr)
				}
			}
			if tc.wantSilence && p.stderr.String() != "" {
				t.Fatalf("want nothing on stderr under -q, have\n%s", &p.stderr)
			}
			if exists(pidFile) {
				pid := testutil.ReadPID(t, pidFile, 0)
				if alive(pid) {
					t.Fatalf("the hung hook's background sleep %d is still running: want its group killed", pid)
				}
			}
		})
	}
}

// TestHookSignalDuringOnStart: SIGTERM while the on-start hook runs kills
// it and aborts the run (143): the command never ran, the lock is free.
func TestHookSignalDuringOnStart(t *testing.T) {
	dir := t.TempDir()
	lock, marker, ready := filepath.Join(dir, "job.lock"), filepath.Join(dir, "ran"), filepath.Join(dir, "ready")
	p := startLW(t, nil, "flock", "run", lock, "--on-start", "touch "+ready+"; sleep 1000", "--", "touch", marker)
	waitFor(t, "the hook to run", func() bool { return exists(ready) })
	p.Cmd.Process.Signal(syscall.SIGTERM)
	if have := p.wait(t); have != 143 {
		t.Fatalf("want 143, have %d\n%s", have, &p.stderr)
	}
	if exists(marker) || !flockFree(lock) {
		t.Fatalf("want the command not run and the lock free, have ran %v, free %v", exists(marker), flockFree(lock))
	}
}

// TestHookOnExitAfterALostClaim: a claim (anchored: its command waits,
// stopped, while on-start runs) is lost while its job runs; on-exit runs
// only once the job is dead, and says lost and 76.
func TestHookOnExitAfterALostClaim(t *testing.T) {
	root, env := claimEnv(t)
	ready, pidFile, seen := filepath.Join(root, "ready"), filepath.Join(root, "job.pid"), filepath.Join(root, "seen")
	script := fmt.Sprintf(`echo $$ > %s; touch %s; while :; do sleep 0.02; done`, pidFile, ready)
	onExit := testutil.OnExitProbe(pidFile, seen)
	p := startLW(t, env, "claim", "run", "job", "--root", root, "--ttl", "1m", "--renew-every", "100ms", "--kill-grace", "500ms",
		"--on-start", "test ! -e "+pidFile+" && touch "+filepath.Join(root, "started-first"), "--on-exit", onExit, "--", "sh", "-c", script)
	waitFor(t, "child ready", func() bool { return exists(ready) })
	if !exists(filepath.Join(root, "started-first")) {
		t.Fatalf("want on-start run before the command")
	}
	if err := os.WriteFile(claimFile(root, "job"), []byte(claimYAML("job", "thief", os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if have := p.wait(t); have != cli.ExitLost {
		t.Fatalf("want %d, have %d\n%s", cli.ExitLost, have, &p.stderr)
	}
	b, _ := os.ReadFile(seen)
	if want := fmt.Sprintf("lost %d dead\n", cli.ExitLost); string(b) != want {
		t.Fatalf("on-exit: want %q, have %q\n%s", want, b, &p.stderr)
	}
}

// TestHookNotRunWithoutTheLease: a run that never held the lease (held by
// another) runs neither hook.
func TestHookNotRunWithoutTheLease(t *testing.T) {
	dir := t.TempDir()
	lock, ready, gone, hooked := filepath.Join(dir, "job.lock"), filepath.Join(dir, "ready"), filepath.Join(dir, "gone"), filepath.Join(dir, "hooked")
	holder := startLW(t, nil, "flock", "run", lock, "--", "sh", "-c", holdUntil(ready, gone))
	waitFor(t, "holder's child", func() bool { return exists(ready) })
	code, p := runLW(t, nil, "flock", "run", lock, "--on-start", "touch "+hooked, "--on-exit", "touch "+hooked, "--", "true")
	if code != 75 || exists(hooked) {
		t.Fatalf("want 75 and no hook run, have %d, hook ran %v\n%s", code, exists(hooked), &p.stderr)
	}
	os.WriteFile(gone, nil, 0o644)
	holder.wait(t)
}

// TestHookOnExitAfterTimeout: a job stopped at --timeout is over before
// on-exit runs, which says timeout and leasewrap's 124.
func TestHookOnExitAfterTimeout(t *testing.T) {
	dir := t.TempDir()
	lock, pidFile, seen := filepath.Join(dir, "job.lock"), filepath.Join(dir, "job.pid"), filepath.Join(dir, "seen")
	code, p := runLW(t, nil, "flock", "run", lock, "--timeout", "300ms", "--kill-grace", "200ms", "--on-exit", testutil.OnExitProbe(pidFile, seen),
		"--", "sh", "-c", "echo $$ > "+pidFile+"; exec sleep 30")
	if code != 124 {
		t.Fatalf("want 124, have %d\n%s", code, &p.stderr)
	}
	if b, _ := os.ReadFile(seen); string(b) != "timeout 124 dead\n" {
		t.Fatalf("on-exit: want \"timeout 124 dead\", have %q\n%s", b, &p.stderr)
	}
}
