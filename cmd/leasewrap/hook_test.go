package main

import (
	"fmt"
	"io"
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
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/internal/cgroup"
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

// hookForms are the forms a hook runs in: the cgroup where one can be
// created (not under CI: there it must be), and the process group.
func hookForms(t *testing.T) []string {
	t.Helper()
	if _, err := cgroup.Parent(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("a cgroup v2 directory: %v (CI must offer it: .ci/run runs as root on a cgroup v2 host)", err)
		}
		t.Logf("no cgroup form tested: %v", err)
		return []string{"pgroup"}
	}
	return []string{"cgroup", "pgroup"}
}

// startLWPiped starts leasewrap with its stdout and stderr one pipe, as
// `leasewrap … 2>&1 | cut` has them: eof is closed once every process
// holding the pipe's write end is gone, out has what came through.
func startLWPiped(t *testing.T, env []string, args ...string) (p *testutil.Proc, eof <-chan struct{}, out *testutil.Buffer) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	cmd := leasewrapCmd(t, args...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = w, w
	p = testutil.Start(t, cmd)
	w.Close()
	done, out := make(chan struct{}), &testutil.Buffer{}
	go func() {
		io.Copy(out, r)
		close(done)
	}()
	return p, done, out
}

// killAtEnd SIGKILLs the pid written to path, if any, when the test ends:
// what a test proves may survive (a process-group hook's setsid) is not
// left behind.
func killAtEnd(t *testing.T, path string) {
	t.Cleanup(func() {
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				unix.Kill(pid, unix.SIGKILL)
			}
		}
	})
}

// TestHookLeftoversAreStoppedWithIt: a hook is part of the run. What it
// leaves running is killed when its shell exits (or at --hook-timeout),
// a hook that exited 0 is not reported as failed (also under -q), and
// nothing it left holds leasewrap's stderr: `leasewrap … 2>&1 | cut`
// ends with leasewrap. In the cgroup form a setsid(1) leftover is killed
// too; in the process-group form it escapes the kill, but its output was
// cut loose.
func TestHookLeftoversAreStoppedWithIt(t *testing.T) {
	for _, form := range hookForms(t) {
		for _, tc := range []struct {
			name    string
			quiet   bool
			hook    string // with PID for the leftover's pid file
			setsid  bool
			timeout string
		}{
			{"background -q", true, "--on-start=sleep 1000 & echo $! > PID", false, "1m"},
			{"background", false, "--on-start=sleep 1000 & echo $! > PID", false, "1m"},
			{"background on-exit -q", true, "--on-exit=sleep 1000 & echo $! > PID", false, "1m"},
			{"setsid -q", true, "--on-start=setsid sh -c 'echo $$ > PID.tmp; mv PID.tmp PID; exec sleep 1000' & while [ ! -s PID ]; do sleep 0.01; done", true, "1m"},
			{"setsid", false, "--on-exit=setsid sh -c 'echo $$ > PID.tmp; mv PID.tmp PID; exec sleep 1000' & while [ ! -s PID ]; do sleep 0.01; done", true, "1m"},
			{"setsid at the timeout", false, "--on-start=setsid sh -c 'echo $$ > PID.tmp; mv PID.tmp PID; exec sleep 1000' & while [ ! -s PID ]; do sleep 0.01; done; sleep 1000", true, "3s"},
		} {
			t.Run(form+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				lock, pidFile := filepath.Join(dir, "job.lock"), filepath.Join(dir, "left.pid")
				killAtEnd(t, pidFile)
				var args []string
				if tc.quiet {
					args = append(args, "-q")
				}
				args = append(args, "flock", "run", lock, "--job", form, "--hook-timeout", tc.timeout,
					strings.ReplaceAll(tc.hook, "PID", pidFile), "--", "sh", "-c", "exit 4")
				p, eof, out := startLWPiped(t, nil, args...)
				select {
				case <-p.Done():
				case <-time.After(30 * time.Second):
					t.Fatalf("leasewrap did not exit within 30s\n%s", out)
				}
				if have := testutil.ExitCode(p.Cmd.ProcessState); have != 4 {
					t.Fatalf("want the command's 4, have %d\n%s", have, out)
				}
				select {
				case <-eof:
				case <-time.After(30 * time.Second):
					t.Fatalf("leasewrap exited, but its stderr is still held open 30s later (a leftover of the hook has it)\n%s", out)
				}
				timedOut := tc.timeout != "1m"
				if tc.quiet && !timedOut && out.String() != "" {
					t.Fatalf("want nothing on stderr under -q for a hook that exited 0, have\n%s", out)
				}
				if !timedOut && strings.Contains(out.String(), "hook failed") {
					t.Fatalf("a hook that exited 0 was reported as failed:\n%s", out)
				}
				if timedOut && !strings.Contains(out.String(), "killed at the hook timeout (3s)") {
					t.Fatalf("want the timeout said, have\n%s", out)
				}
				pid := testutil.ReadPID(t, pidFile, 0)
				switch {
				case tc.setsid && form == "pgroup":
					// Out of the hook's process group: beyond the kill.
				case alive(pid):
					t.Fatalf("the hook's leftover %d outlived leasewrap\n%s", pid, out)
				}
			})
		}
	}
}

// TestHookTimeoutZeroIsNoLimit: 0 turns a limit off, as --timeout 0 does
// (and timeout(1)); it does not kill the hook at once.
func TestHookTimeoutZeroIsNoLimit(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "job.lock")
	code, p := runLW(t, nil, "--log-level", "debug", "flock", "run", lock, "--hook-timeout", "0s", "--on-start", "sleep 0.2; echo hook-ran", "--", "true")
	if code != 0 {
		t.Fatalf("want 0, have %d\n%s", code, &p.stderr)
	}
	for _, w := range []string{"hook-ran", "running the on-start hook", "timeout=none", "on-start hook done"} {
		if !strings.Contains(p.stderr.String(), w) {
			t.Fatalf("want %q on stderr, have\n%s", w, &p.stderr)
		}
	}
}

// TestHookLossDuringOnStartIsSaid: a claim lost while its on-start hook
// runs kills the hook; the command does not run (75), and the log says
// so, not that the run goes on.
func TestHookLossDuringOnStartIsSaid(t *testing.T) {
	root, env := claimEnv(t)
	ready, marker := filepath.Join(root, "ready"), filepath.Join(root, "ran")
	p := startLW(t, env, "claim", "run", "job", "--root", root, "--ttl", "1m", "--renew-every", "100ms",
		"--on-start", "touch "+ready+"; sleep 1000", "--", "touch", marker)
	waitFor(t, "the hook to run", func() bool { return exists(ready) })
	if err := os.WriteFile(claimFile(root, "job"), []byte(claimYAML("job", "thief", os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if have := p.wait(t); have != 75 {
		t.Fatalf("want 75, have %d\n%s", have, &p.stderr)
	}
	if exists(marker) {
		t.Fatalf("the command ran after its lease was lost")
	}
	s := p.stderr.String()
	if strings.Contains(s, "goes on") || strings.Contains(s, "hook failed") {
		t.Fatalf("want no \"hook failed; the run goes on\" for a hook killed by the loss, have\n%s", s)
	}
	for _, w := range []string{"lost while the on-start hook ran", "the command did not run"} {
		if !strings.Contains(s, w) {
			t.Fatalf("want %q on stderr, have\n%s", w, s)
		}
	}
}
