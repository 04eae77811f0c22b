package supervisor

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// Settling is bounded like the fence (issue 17): a renewal hangs, the job
// is stopped at the fence, and the release hangs too (a mkdir held in the
// kernel, ignoring its context). leasewrap abandons it at the lease's
// expiry and exits 76; before, it waited for the release forever.
func TestSettleAfterTheFenceIsBounded(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			ready := filepath.Join(dir, "ready")
			s := startSup(t, testEnv(dir, "T_ANCHORED="+m.anchored, "T_TTL=3s", "T_PERIOD=200ms",
				"T_GRACE=300ms", "T_BLOCK_RENEW=1", "T_BLOCK_FINISH=1", "T_FINISH_TIMEOUT=1h"),
				"sh", "-c", "touch "+ready+"; sleep 60")
			waitFile(t, ready)
			if have := s.wait(t); have != 76 {
				t.Fatalf("want 76, have %d\n%s", have, &s.stderr)
			}
			waitFile(t, filepath.Join(dir, "job.lease.finishing")) // Finish was called, and abandoned
			contains(t, s.stderrText(), "abandoned")
		})
	}
}

// A lease without a TTL whose job ended normally but whose release hangs
// is abandoned at FinishTimeout: a failure to settle (70), not a hang.
func TestSettleOfALeaseWithoutTTLIsBounded(t *testing.T) {
	dir := t.TempDir()
	have, s := runSup(t, testEnv(dir, "T_BLOCK_FINISH=1", "T_FINISH_TIMEOUT=500ms"), "true")
	if have != 70 {
		t.Fatalf("want 70, have %d\n%s", have, &s.stderr)
	}
	contains(t, s.stderrText(), "abandoned")
}

// Zero means zero (issue 17): with a kill grace of 0 a straggler that
// ignores SIGTERM gets SIGKILL at once, and so does a job whose lease
// was lost; before, a zero grace read as unset and became 10 s.
func TestZeroKillGraceIsHonoured(t *testing.T) {
	t.Run("straggler", func(t *testing.T) {
		dir := t.TempDir()
		pidf := filepath.Join(dir, "stray.pid")
		script := fmt.Sprintf(`sh -c 'trap "" TERM; echo $$ > %s.tmp; mv %s.tmp %s; exec sleep 100' >/dev/null 2>&1 & while [ ! -s %s ]; do sleep 0.01; done; exit 0`, pidf, pidf, pidf, pidf)
		have, s := runSup(t, testEnv(dir, "T_GRACE=0s"), "sh", "-c", script)
		if have != 0 {
			t.Fatalf("want 0, have %d\n%s", have, &s.stderr)
		}
		if stray := readPID(t, pidf); alive(stray) {
			t.Fatalf("stray %d still runs after leasewrap exited", stray)
		}
		contains(t, s.stderrText(), "how=SIGKILL")
	})
	t.Run("lost", func(t *testing.T) {
		dir := t.TempDir()
		ready := filepath.Join(dir, "ready")
		s := startSup(t, testEnv(dir, "T_GRACE=0s", "T_PERIOD=50ms"), "sh", "-c", "trap 'echo got TERM' TERM; touch "+ready+"; while :; do sleep 0.05; done")
		waitFile(t, ready)
		os.WriteFile(filepath.Join(dir, "job.lease"), []byte("thief 1"), 0o644)
		if have := s.wait(t); have != 76 {
			t.Fatalf("want 76, have %d\n%s", have, &s.stderr)
		}
		if strings.Contains(s.stdout.String(), "got TERM") {
			t.Fatalf("with no grace the job got SIGTERM first:\n%s", &s.stdout)
		}
	})
}

// The straggler log line is bounded (issue 17): a count and the first
// few pids, however many processes were left.
func TestStragglerLogIsBounded(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	script := fmt.Sprintf(`for i in $(seq 30); do sleep 100 & done; touch %s; exit 0`, ready)
	have, s := runSup(t, testEnv(dir, "T_GRACE=5s"), "sh", "-c", script)
	if have != 0 {
		t.Fatalf("want 0, have %d\n%s", have, &s.stderr)
	}
	var line string
	for _, l := range strings.Split(s.stderrText(), "\n") {
		if strings.Contains(l, "processes of its job still running") {
			line = l
		}
	}
	if !strings.Contains(line, "count=30") {
		t.Fatalf("want count=30 in the straggler line, have %q", line)
	}
	if n := strings.Count(line, "(sleep)"); n != maxLoggedMembers {
		t.Fatalf("want %d pids listed, have %d in %q", maxLoggedMembers, n, line)
	}
}

// A run ended by a signal leasewrap passed on (a shutdown) says so in the
// result Finish gets, so a kind that publishes results does not record it
// as the key's outcome; a run that fails on its own does not.
func TestForwardedSignalIsMarkedInTheResult(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		signal       bool
		want         string
	}{
		{"died of it", "touch READY; sleep 60", true, "143 lost=false forwarded=15"},
		{"a shell reports it", "touch READY; sleep 60 & wait; exit 143", true, "143 lost=false forwarded=15"},
		{"own failure", "touch READY; exit 143", false, "143 lost=false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ready := filepath.Join(dir, "READY")
			s := startSup(t, testEnv(dir, "T_GRACE=5s"), "sh", "-c", strings.ReplaceAll(tc.script, "READY", ready))
			waitFile(t, ready)
			if tc.signal {
				s.cmd.Process.Signal(syscall.SIGTERM)
			}
			if have := s.wait(t); have != 143 {
				t.Fatalf("want 143, have %d\n%s", have, &s.stderr)
			}
			if got := readFile(t, filepath.Join(dir, "job.lease.result")); got != tc.want {
				t.Fatalf("want Finish to see %q, have %q", tc.want, got)
			}
		})
	}
}

// A terminating signal that arrives after the child started but before
// supervision began is passed on to the job by acquisition, and the run
// it ends is marked as ended by a forwarded signal like any other.
func TestSignalRacingTheStartIsMarkedForwarded(t *testing.T) {
	dir := t.TempDir()
	have, s := runSup(t, testEnv(dir, "T_ANCHORED=1", "T_TERM_AT_ANCHOR=1", "T_GRACE=5s"), "sleep", "60")
	if have != 143 {
		t.Fatalf("want 143, have %d\n%s", have, &s.stderr)
	}
	if got := readFile(t, filepath.Join(dir, "job.lease.result")); got != "143 lost=false forwarded=15" {
		t.Fatalf("want Finish to see the forwarded SIGTERM, have %q\n%s", got, &s.stderr)
	}
}

// Config.OnEvent sees the run's events in order: acquired, started, a
// renewal, finished; a waiter sees who holds the lease.
func TestEventHook(t *testing.T) {
	dir := t.TempDir()
	have, s := runSup(t, testEnv(dir, "T_EVENTS=1", "T_PERIOD=100ms"), "sleep", "0.5")
	if have != 0 {
		t.Fatalf("want 0, have %d\n%s", have, &s.stderr)
	}
	var types []string
	pid := ""
	for _, l := range strings.Split(s.stderrText(), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "event" {
			if len(types) == 0 || types[len(types)-1] != f[1] {
				types = append(types, f[1])
			}
			if f[1] == "started" {
				pid = strings.TrimPrefix(f[2], "pid=")
			}
		}
	}
	if got := strings.Join(types, " "); got != "acquired started renewed finished" {
		t.Fatalf("want acquired started renewed finished, have %q\n%s", got, &s.stderr)
	}
	if n, err := strconv.Atoi(pid); err != nil || n <= 0 {
		t.Fatalf("want the child's pid in the started event, have %q", pid)
	}

	os.WriteFile(filepath.Join(dir, "job.lease"), []byte("other 1"), 0o644)
	have, s = runSup(t, testEnv(dir, "T_EVENTS=1"), "true")
	if have != 75 {
		t.Fatalf("want 75, have %d\n%s", have, &s.stderr)
	}
	contains(t, s.stderrText(), "event waiting pid=0 holder=other 1")
}

// A waiter names whom it waits for when it starts waiting.
func TestWaiterNamesTheHolder(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "job.lease"), []byte("other 1"), 0o644)
	have, s := runSup(t, testEnv(dir, "T_WAIT=300ms"), "true")
	if have != 75 {
		t.Fatalf("want 75, have %d\n%s", have, &s.stderr)
	}
	contains(t, s.stderrText(), `holder="other 1"`)
}

// A waiter says again whom it waits for, and for how long, every
// waitReport (a minute; shortened here), not only when it starts.
func TestWaiterRepeatsWhomItWaitsFor(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "job.lease"), []byte("other 1"), 0o644)
	var logs testutil.Buffer
	cfg := withDefaults(Config{Locker: &fileKind{dir: dir, key: "job", holder: "me"}, Argv: []string{"true"}, Wait: 400 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	r := &runner{cfg: cfg, waitReport: 100 * time.Millisecond, sigs: make(chan os.Signal, 1)}
	j := &job{locker: cfg.Locker, argv: cfg.Argv}
	if err := j.resolve("", cfg.Env); err != nil {
		t.Fatal(err)
	}
	_, err := r.acquire(t.Context(), j)
	if !errors.Is(err, ErrWaitTimeout) {
		t.Fatalf("want ErrWaitTimeout, have %v", err)
	}
	out := logs.String()
	if n := strings.Count(out, "lease still held; still waiting"); n < 2 {
		t.Fatalf("want the waiter to report again at least twice in 400ms at a 100ms period, have %d:\n%s", n, out)
	}
	contains(t, out, `holder="other 1"`)
	contains(t, out, "waited=")
}

// A signal that reaches acquisition's watcher after the attempt has
// returned with the job started (the group's interrupt not yet seen) is
// the job's: it is passed on, not dropped with the group's second error.
// The watcher is held back until the job runs and the signal waits beside
// the interrupt; its select then picks either, so each round would lose
// the signal half the time were it not passed on (16 rounds: all but
// 1 in 65,536 runs would catch that).
func TestSignalTakenAfterTheStartIsPassedOn(t *testing.T) {
	for round := range 16 {
		dir := t.TempDir()
		ready, got := filepath.Join(dir, "ready"), filepath.Join(dir, "got")
		script := `trap 'touch ` + got + `; exit 0' TERM; touch ` + ready + `; while :; do sleep 0.05; done`
		cfg := withDefaults(Config{Locker: &fileKind{dir: dir, key: "job", holder: "me"}, Argv: []string{"sh", "-c", script}, Job: JobPgroup})
		r := &runner{cfg: cfg, waitReport: time.Minute, sigs: make(chan os.Signal, 1)}
		var once sync.Once
		r.beforeWatch = func() {
			once.Do(func() {
				waitFile(t, ready)                // the attempt started the job and is returning
				time.Sleep(50 * time.Millisecond) // and the group has interrupted the watcher
				r.sigs <- syscall.SIGTERM
			})
		}
		j := &job{locker: cfg.Locker, argv: cfg.Argv}
		if err := j.resolve("", cfg.Env); err != nil {
			t.Fatal(err)
		}
		a, err := r.acquire(t.Context(), j)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		t.Cleanup(func() { a.child.form.signal(syscall.SIGKILL) })
		switch {
		case len(r.sigs) == 1:
			// The watcher took the interrupt: the signal waits for the
			// supervision loop, which forwards it.
		case a.forwarded != syscall.SIGTERM:
			t.Fatalf("round %d: the watcher took the SIGTERM and neither passed it on nor left it: forwarded %v", round, a.forwarded)
		default:
			waitFile(t, got)
		}
	}
}
