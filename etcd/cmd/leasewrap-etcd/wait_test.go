package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// waitUntilGone is a job that says it runs (ready) and holds until gone.
func waitUntilGone(ready, gone string) []string {
	return []string{"sh", "-c", "touch " + ready + "; while [ ! -e " + gone + " ]; do sleep 0.05; done"}
}

// startLogged starts leasewrap-etcd with its output in a file the test can
// read while it runs.
func startLogged(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	log := tmp(t, "log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), envMain+"=1")
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, log
}

// waitLog waits up to 20 s (stretched by testutil.Scale) until the file
// at log contains every want.
func waitLog(t *testing.T, log string, want ...string) string {
	t.Helper()
	var b []byte
	err := testutil.Poll(20*time.Second, func() bool {
		b, _ = os.ReadFile(log)
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				return false
			}
		}
		return true
	})
	if err != nil {
		t.Fatalf("want %q in the log: %v; have:\n%s", want, err, b)
	}
	return string(b)
}

// TestEtcdWaitersSayWhomTheyWaitFor: a lock or once waiter says whom it
// waits for when it starts, again every report period with how long it
// has waited (a minute by default; shortened here), and each attempt at
// debug level; then it gets its turn.
func TestEtcdWaitersSayWhomTheyWaitFor(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	eps := strings.Join(c.Endpoints(), ",")
	for _, kind := range []string{"lock", "once"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			ready, gone := filepath.Join(dir, "ready"), filepath.Join(dir, "gone")
			holder := startLW(t, nil, append([]string{kind, "run", "w-" + kind, "--endpoints", eps, "--holder", "the-holder", "--"}, waitUntilGone(ready, gone)...)...)
			waitFile0(t, ready)
			waiter, log := startLogged(t, "--log-level", "debug", kind, "run", "w-"+kind, "--endpoints", eps,
				"--wait", "1m", "--wait-report-every", "200ms", "--", "true")
			holderNames := map[string]string{"lock": "holder=w-lock/", "once": "holder=the-holder"}
			out := waitLog(t, log, "lease held by another; waiting", holderNames[kind], "lease still held by another; still waiting", "waited=", "attempt=")
			if kind == "lock" && (!strings.Contains(out, "holder_ttl_left=") || !strings.Contains(out, "ahead_of_us=1")) {
				t.Errorf("lock: want the holder lease TTL left and one key ahead, have:\n%s", out)
			}
			if kind == "once" && !strings.Contains(out, "in flight since") {
				t.Errorf("once: want since when the run is in flight, have:\n%s", out)
			}
			os.WriteFile(gone, nil, 0o644)
			if code := holder.wait(t, 30*time.Second); code != 0 {
				t.Fatalf("holder: want 0, have %d:\n%s", code, holder.out.String())
			}
			done := make(chan error, 1)
			go func() { done <- waiter.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					b, _ := os.ReadFile(log)
					t.Fatalf("waiter: want exit 0 (ran, or replayed the holder's 0), have %v:\n%s", err, b)
				}
			case <-time.After(testutil.Scale(30 * time.Second)):
				t.Fatal("waiter did not finish after the holder")
			}
		})
	}
}

func waitFile0(t *testing.T, path string) {
	t.Helper()
	testutil.WaitFor(t, path+" created", 20*time.Second, func() bool { _, err := os.Stat(path); return err == nil })
}
