package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/supervisor"
)

// envMain makes the re-executed test binary behave as leasewrap-etcd.
const envMain = "LEASEWRAP_ETCD_TEST_MAIN"

func TestMain(m *testing.M) {
	supervisor.Gate() // the supervisor's helpers (exec gate, job guard) re-execute this binary
	etcdtest.Serve()
	jobMain() // the test job, when started as one
	if os.Getenv(envMain) == "1" {
		stdout, stderr := cli.Streams(os.Args[1:]) // as main does
		os.Exit(realMain(os.Args[1:], stdout, stderr))
	}
	// Every leasewrap-etcd the tests start waits for the loopback etcd as
	// long as this machine needs (a test of the dial timeout names its own).
	os.Setenv("ETCDCTL_DIAL_TIMEOUT", testutil.Scale(2*time.Second).String())
	os.Exit(m.Run())
}

// wrapper is one leasewrap-etcd process, in a process group of its own.
type wrapper struct {
	*testutil.Group
	out testutil.Buffer
}

// startLW starts leasewrap-etcd with args (a re-executed test binary) in
// its own process group, with extra environment env.
func startLW(t *testing.T, env []string, args ...string) *wrapper {
	t.Helper()
	w := &wrapper{}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), envMain+"=1"), env...)
	cmd.Stdout, cmd.Stderr = &w.out, &w.out
	w.Group = testutil.StartGroup(t, cmd)
	return w
}

// wait returns the exit code, failing the test after d (stretched by
// testutil.Scale).
func (w *wrapper) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	d = testutil.Scale(d)
	select {
	case <-w.Done():
		return w.Code()
	case <-time.After(d):
		t.Fatalf("leasewrap-etcd %v still running after %v; output:\n%s", w.Cmd.Args[1:], d, w.out.String())
		return -1
	}
}

// runLW runs leasewrap-etcd to its end (at most 60 s) and returns its code
// and output.
func runLW(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	w := startLW(t, env, args...)
	code := w.wait(t, 60*time.Second)
	return code, w.out.String()
}

// waitFile waits up to d for path to be written whole and returns it.
func waitFile(t *testing.T, path string, d time.Duration) string {
	return testutil.WaitFile(t, path, d)
}

// waitGone waits up to d for pid to be gone and returns how long it took.
func waitGone(t *testing.T, pid int, d time.Duration) time.Duration {
	return testutil.WaitGone(t, pid, d)
}

// pidJob is a shell command that writes its pid to file and sleeps secs.
func pidJob(file string, secs float64) []string {
	return []string{"sh", "-c", fmt.Sprintf("echo $$ > %s.tmp && mv %s.tmp %s && exec sleep %g", file, file, file, secs)}
}

func readPID(t *testing.T, file string) int {
	t.Helper()
	pid, err := strconv.Atoi(waitFile(t, file, 20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// lockArgs builds `lock run NAME --endpoints EPS [extra] -- cmd...`.
func lockArgs(name string, eps []string, extra []string, cmd ...string) []string {
	a := []string{"lock", "run", name, "--endpoints", strings.Join(eps, ",")}
	a = append(a, extra...)
	return append(append(a, "--"), cmd...)
}

// fast are timing flags for fault tests: TTL 4 s, grace 1 s, margin 1 s,
// so the fence is 2 s after the last successful renewal.
var fast = []string{"--ttl", "4s", "--kill-grace", "1s", "--renew-every", "500ms"}

func countKeys(t *testing.T, cli *clientv3.Client, pfx string) int64 {
	t.Helper()
	resp, err := cli.Get(context.Background(), pfx, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

func waitKeys(t *testing.T, cli *clientv3.Client, pfx string, n int64) {
	t.Helper()
	testutil.WaitFor(t, fmt.Sprintf("%d keys under %s", n, pfx), 20*time.Second, func() bool { return countKeys(t, cli, pfx) >= n })
}

func tmp(t *testing.T, name string) string { return filepath.Join(t.TempDir(), name) }

func waitKeysOK(cli *clientv3.Client, pfx string, n int64) bool {
	return testutil.Poll(20*time.Second, func() bool {
		resp, err := cli.Get(context.Background(), pfx, clientv3.WithPrefix(), clientv3.WithCountOnly())
		return err == nil && resp.Count >= n
	}) == nil
}
