package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// waitCond polls cond for up to 20 s.
func waitCond(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.WaitFor(t, what, 20*time.Second, cond)
}

// TestLockListenWhileHeldAndAfterLoss scrapes lock run's --listen endpoint
// while the lock is held (ready, held 1) and after its key is deleted
// under it (lost: not ready, still live — /healthz is the process's — until
// leasewrap exits 76).
func TestLockListenWhileHeldAndAfterLoss(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	ready := filepath.Join(t.TempDir(), "ready")
	cmd, log := startLogged(t, "lock", "run", "svc", "--endpoints", strings.Join(c.Endpoints(), ","), "--ttl", "10",
		"--kill-grace", "3s", "--listen", "127.0.0.1:0", "--", "sh", "-c", "trap '' TERM; touch "+ready+"; while :; do sleep 0.05; done")
	out := waitLog(t, log, "serving /metrics, /healthz and /readyz")
	addr := regexp.MustCompile(`addr=(127\.0\.0\.1:\d+)`).FindStringSubmatch(out)[1]
	waitFile0(t, ready)
	// The supervisor reports the acquisition only after the child has
	// started (and logged it), so /readyz may still say 503 for a moment
	// while the job already runs.
	waitCond(t, "/readyz to say held", func() bool { code, _ := testutil.Get(addr, "/readyz"); return code == 200 })
	if _, body := testutil.Get(addr, "/metrics"); !strings.Contains(body, `leasewrap_lease_held{kind="lock",key="svc"} 1`) {
		t.Fatalf("held: want leasewrap_lease_held 1:\n%s", body)
	}
	if _, err := c.Client(t).Delete(context.Background(), "svc/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	var r int
	waitCond(t, "/readyz to turn non-200", func() bool { r, _ = testutil.Get(addr, "/readyz"); return r != 200 })
	if r == 503 { // still running: in the kill grace
		if code, body := testutil.Get(addr, "/healthz"); code != 200 && code != 0 || code == 200 && !strings.Contains(body, "lost") {
			t.Fatalf("lost: /healthz want 200 saying lost, have %d %q", code, body)
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(testutil.Scale(30 * time.Second)):
		t.Fatal("leasewrap-etcd did not exit after the loss")
	}
	if code := cmd.ProcessState.ExitCode(); code != 76 {
		b, _ := os.ReadFile(log)
		t.Fatalf("want 76, have %d:\n%s", code, b)
	}
}
