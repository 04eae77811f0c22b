package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
	"github.com/leasewrap/leasewrap/supervisor"
)

// envMain makes the re-executed test binary behave as leasewrap-pg.
const envMain = "LEASEWRAP_PG_TEST_MAIN"

func TestMain(m *testing.M) {
	supervisor.Gate() // the supervisor's helpers re-execute this binary
	if os.Getenv(envMain) == "1" {
		stdout, stderr := cli.Streams(os.Args[1:]) // as main does
		os.Exit(realMain(os.Args[1:], stdout, stderr))
	}
	os.Exit(m.Run())
}

// wrapper is one leasewrap-pg process, in a process group of its own.
type wrapper struct {
	*testutil.Group
	out testutil.Buffer
}

// startLW starts leasewrap-pg (a re-executed test binary) with args and
// extra environment env.
func startLW(t *testing.T, env []string, args ...string) *wrapper {
	t.Helper()
	w := &wrapper{}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), envMain+"=1", "DATABASE_URL=", "PGPASSWORD="), env...)
	cmd.Stdout, cmd.Stderr = &w.out, &w.out
	w.Group = testutil.StartGroup(t, cmd)
	return w
}

// wait returns the exit code, failing the test after d (scaled).
func (w *wrapper) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-w.Done():
		return w.Code()
	case <-time.After(pgtest.Scale(d)):
		t.Fatalf("leasewrap-pg %v still running after %v; output:\n%s", w.Cmd.Args[1:], d, w.out.String())
		return -1
	}
}

// runLW runs leasewrap-pg to its end and returns its code and output.
func runLW(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	w := startLW(t, env, args...)
	code := w.wait(t, 60*time.Second)
	return code, w.out.String()
}

// runArgs builds `pg run NAME --dsn DSN [extra] -- cmd...`.
func runArgs(name, dsn string, extra []string, cmd ...string) []string {
	a := append([]string{"pg", "run", name, "--dsn", dsn}, extra...)
	return append(append(a, "--"), cmd...)
}

// fast are timing flags for tests: TTL 4 s, grace 1 s.
var fast = []string{"--ttl", "4s", "--kill-grace", "1s", "--renew-every", "500ms"}

func tmp(t *testing.T, name string) string { return filepath.Join(t.TempDir(), name) }

// pidJob is a shell command that writes its pid to file and sleeps secs.
func pidJob(file string, secs float64) []string {
	return []string{"sh", "-c", fmt.Sprintf("echo $$ > %s.tmp && mv %s.tmp %s && exec sleep %g", file, file, file, secs)}
}

// readPID waits for file and returns the pid in it.
func readPID(t *testing.T, file string) int {
	t.Helper()
	pid, err := strconv.Atoi(testutil.WaitFile(t, file, pgtest.Scale(30*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// readFile waits for path and returns it.
func readFile(t *testing.T, path string) string {
	t.Helper()
	return testutil.WaitFile(t, path, pgtest.Scale(30*time.Second))
}
