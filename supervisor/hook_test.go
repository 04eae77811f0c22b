package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/cgroup"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// hookForms are the job forms a hook's box is tested in: cgroup where one
// can be created (under CI it must be), and the process group.
func hookForms(t *testing.T) []JobMode {
	t.Helper()
	if _, err := cgroup.Parent(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("a cgroup v2 directory: %v (CI must offer it)", err)
		}
		t.Logf("cgroup form not tested: %v", err)
		return []JobMode{JobPgroup}
	}
	return []JobMode{JobAuto, JobPgroup}
}

// hookRunner is a runner for runHook alone: its stderr a file, its log
// in log at level (Error: as under -q).
func hookRunner(t *testing.T, form JobMode, level slog.Level, timeout time.Duration) (r *runner, stderr *os.File, log *testutil.Buffer) {
	t.Helper()
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stderr.Close() })
	log = &testutil.Buffer{}
	cfg := withDefaults(Config{Job: form, HookTimeout: timeout, Stderr: stderr,
		Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: level}))})
	return &runner{cfg: cfg}, stderr, log
}

// runHookWithin runs runHook, failing t if it has not returned within
// 30 s (a leftover holding its output pipe would hold it).
func runHookWithin(t *testing.T, r *runner, ctx context.Context, script string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- r.runHook(ctx, "on-start", script, os.Environ()) }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("runHook(%q) did not return within 30s", script)
	}
	return nil
}

// A hook is part of the run (issue 30): what it leaves running is killed
// once its shell exits, so a hook that exited 0 with a background process
// is a success (nothing said under -q), and runHook does not wait for the
// leftover's output. In the cgroup form that includes what called setsid;
// in the process-group form that escapes, and its output is cut loose.
func TestHookLeftoversAreKilled(t *testing.T) {
	for _, form := range hookForms(t) {
		for _, setsid := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/setsid=%v", form, setsid), func(t *testing.T) {
				pidf := filepath.Join(t.TempDir(), "left.pid")
				t.Cleanup(func() {
					if b, err := os.ReadFile(pidf); err == nil {
						var pid int
						fmt.Sscan(string(b), &pid)
						if pid > 0 {
							unix.Kill(pid, unix.SIGKILL)
						}
					}
				})
				script := "sleep 1000 & echo $! > " + pidf
				if setsid {
					script = fmt.Sprintf(`setsid sh -c '%s; exec sleep 1000' & while [ ! -s %s ]; do sleep 0.01; done`, writePID(pidf), pidf)
				}
				r, stderr, log := hookRunner(t, form, slog.LevelError, time.Minute)
				if err := runHookWithin(t, r, context.Background(), script); err != nil {
					t.Fatalf("want no interruption, have %v", err)
				}
				if log.String() != "" {
					t.Fatalf("want nothing logged under -q for a hook that exited 0, have\n%s", log)
				}
				if b, _ := os.ReadFile(stderr.Name()); len(b) != 0 {
					t.Fatalf("want nothing on stderr under -q, have %q", b)
				}
				pid := readPID(t, pidf)
				if setsid && form == JobPgroup {
					return // out of the process group: beyond the kill
				}
				testutil.WaitGone(t, pid, 10*time.Second)
			})
		}
	}
}

// A hook's output reaches stderr when info is logged, and is kept back
// and shown with the failure under -q; a failure says the status.
func TestHookOutputAndFailure(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelError} {
		t.Run(level.String(), func(t *testing.T) {
			r, stderr, log := hookRunner(t, JobAuto, level, time.Minute)
			runHookWithin(t, r, context.Background(), "echo said-this; exit 3")
			if b, _ := os.ReadFile(stderr.Name()); string(b) != "said-this\n" {
				t.Fatalf("want the hook's output on stderr, have %q", b)
			}
			contains(t, log.String(), "on-start hook failed")
			contains(t, log.String(), "exited with status 3")
		})
	}
}

// A hook killed because its run ended (ctx: a loss, an abort) is not
// called failed: runHook returns the cause for the caller to say.
func TestHookInterruptedReturnsTheCause(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	r, _, log := hookRunner(t, JobAuto, slog.LevelInfo, 0)
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		testutil.Poll(10*time.Second, func() bool { _, err := os.Stat(ready); return err == nil })
		cancel(fmt.Errorf("the test's cause"))
	}()
	err := runHookWithin(t, r, ctx, "touch "+ready+"; sleep 1000")
	if err == nil || err.Error() != "the test's cause" {
		t.Fatalf("want the cause returned, have %v", err)
	}
	if strings.Contains(log.String(), "hook failed") {
		t.Fatalf("want no failure logged, have\n%s", log)
	}
}

// Leasewrap stopping the job leaves no straggler warning (issue 30): at
// --timeout or on a loss the child dies of the stop signal while a member
// ignoring it waits for SIGKILL; the warning stays for a child that exits
// on its own (TestStragglersOfAFinishedChild).
func TestNoStragglerWarningWhileLeasewrapStopsTheJob(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		lose bool
		want int
	}{
		{"timeout", []string{"T_TIMEOUT=300ms", "T_GRACE=500ms"}, false, 124},
		{"lost", []string{"T_PERIOD=50ms", "T_GRACE=500ms"}, true, 76},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pidf, ready := filepath.Join(dir, "stray.pid"), filepath.Join(dir, "ready")
			script := fmt.Sprintf(`sh -c 'trap "" TERM; %s; exec sleep 100' & while [ ! -s %s ]; do sleep 0.01; done; touch %s; wait`, writePID(pidf), pidf, ready)
			s := startSup(t, testEnv(dir, tc.env...), "sh", "-c", script)
			waitFile(t, ready)
			if tc.lose {
				os.WriteFile(filepath.Join(dir, "job.lease"), []byte("thief 1"), 0o644)
			}
			if have := s.wait(t); have != tc.want {
				t.Fatalf("want %d, have %d\n%s", tc.want, have, &s.stderr)
			}
			if stray := readPID(t, pidf); alive(stray) {
				t.Fatalf("stray %d still runs after leasewrap exited", stray)
			}
			if strings.Contains(s.stderrText(), "processes of its job still running") {
				t.Fatalf("want no straggler warning while leasewrap stops the job, have\n%s", s.stderrText())
			}
		})
	}
}
