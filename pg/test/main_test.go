// Package test runs leasewrap-pg as real processes against real PostgreSQL
// servers (pg/internal/pgtest) and checks what the wrapped jobs recorded.
package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
)

// lwBin is the leasewrap-pg executable, built on first use into binDir.
var (
	binDir    string
	buildOnce sync.Once
	lwBin     string
	buildErr  error
)

func TestMain(m *testing.M) {
	jobMain() // the test job, when a wrapper started this binary as one
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// leasewrapPG builds leasewrap-pg once per test binary.
func leasewrapPG(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "leasewrap-pg-test-"); buildErr != nil {
			return
		}
		lwBin = filepath.Join(binDir, "leasewrap-pg")
		out, err := exec.Command("go", "build", "-o", lwBin, "github.com/leasewrap/leasewrap/pg/cmd/leasewrap-pg").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("build leasewrap-pg: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return lwBin
}

// wrapper is one leasewrap-pg process in a process group of its own.
type wrapper struct {
	*testutil.Group
	out testutil.Buffer
}

// startLW starts leasewrap-pg with args and extra environment env.
func startLW(t testing.TB, env []string, args ...string) *wrapper {
	t.Helper()
	w := &wrapper{}
	cmd := exec.Command(leasewrapPG(t), args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdout, cmd.Stderr = &w.out, &w.out
	w.Group = testutil.StartGroup(t, cmd)
	return w
}

// cleanEnv is the test's environment without libpq's variables, so a
// developer's PGHOST or DATABASE_URL cannot point a wrapper elsewhere.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "DATABASE_URL=") || strings.HasPrefix(kv, "LEASEWRAP_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// wait returns the exit code, failing the test after d.
func (w *wrapper) wait(t testing.TB, d time.Duration) int {
	t.Helper()
	select {
	case <-w.Done():
		return w.Code()
	case <-time.After(d):
		t.Fatalf("leasewrap-pg %v still running after %v; output:\n%s", redactArgs(w.Cmd.Args[1:]), d, w.out.String())
		return -1
	}
}

// runLW runs leasewrap-pg to its end and returns its code and output.
func runLW(t testing.TB, env []string, args ...string) (int, string) {
	t.Helper()
	w := startLW(t, env, args...)
	code := w.wait(t, pgtest.Scale(90*time.Second))
	return code, w.out.String()
}

// runArgs builds `pg run NAME --dsn DSN [extra] -- this-test-binary` (the job).
func runArgs(name, dsn string, extra ...string) []string {
	a := []string{"pg", "run", name, "--dsn", dsn}
	a = append(a, extra...)
	return append(a, "--", os.Args[0])
}

func redactArgs(args []string) []string {
	out := append([]string(nil), args...)
	for i, a := range out {
		if strings.Contains(a, pgtest.Password) {
			out[i] = strings.ReplaceAll(a, pgtest.Password, "***")
		}
	}
	return out
}

func tmp(t testing.TB, name string) string { return filepath.Join(t.TempDir(), name) }

// fast are timing flags for fault tests: TTL 4 s, kill grace 1 s, a
// renewal every 500 ms.
var fast = []string{"--ttl", "4s", "--kill-grace", "1s", "--renew-every", "500ms"}

// jobEnv is the environment of a test job that logs to hist and runs for
// sleep.
func jobEnv(hist string, sleep time.Duration, extra ...string) []string {
	return append([]string{envJob + "=" + hist, envJobSleep + "=" + sleep.String()}, extra...)
}

// waitJobs waits until hist has at least n jobs started and returns them;
// on a timeout it shows the output of the wrappers ws.
func waitJobs(t testing.TB, hist string, n int, within time.Duration, ws ...*wrapper) []*job {
	t.Helper()
	var h *history
	err := testutil.Poll(pgtest.Scale(within), func() bool {
		h = readHistory(t, hist)
		return len(h.jobs) >= n
	})
	if err != nil {
		var outs []string
		for _, w := range ws {
			outs = append(outs, fmt.Sprintf("leasewrap-pg %v (exit %d):\n%s", redactArgs(w.Cmd.Args[1:]), w.Code(), w.out.String()))
		}
		t.Fatalf("%v waiting for %d jobs started in %s\n%s", err, n, hist, strings.Join(outs, "\n"))
	}
	return h.jobs
}

// holderCode runs `leasewrap-pg holder NAME` (0 held, 1 free, 2 error).
func holderCode(t testing.TB, dsn, name string) (int, string) {
	t.Helper()
	return runLW(t, nil, "pg", "holder", name, "--dsn", dsn)
}
