package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/kube/internal/kubetest"
)

// TestKubeHooks: an on-start hook that outlasts the Lease's duration
// keeps the Lease (renewed meanwhile: a rival that tries after the
// duration finds it held), sees the kube environment, and the command
// runs after it; on-exit runs once the Lease is released and says ran and
// the status.
func TestKubeHooks(t *testing.T) {
	s := kubetest.Start(t)
	b := build(t)
	dir := t.TempDir()
	ready, gone, marker := filepath.Join(dir, "ready"), filepath.Join(dir, "gone"), filepath.Join(dir, "ran")
	startEnv, exitFile := filepath.Join(dir, "start.env"), filepath.Join(dir, "exit")
	onStart := fmt.Sprintf("env > %s; touch %s; while [ ! -e %s ]; do sleep 0.02; done", startEnv, ready, gone)
	onExit := fmt.Sprintf(`echo "$LEASEWRAP_OUTCOME $LEASEWRAP_EXIT_CODE" > %s`, exitFile)
	p := wrap(t, b, s, kubetest.Runner, "hooked", []string{"--identity", "first", "--ttl", "4s", "--kill-grace", "1s", "--renew-every", "500ms",
		"--on-start", onStart, "--on-exit", onExit}, nil, "sh", "-c", "touch "+marker+"; exit 5")
	testutil.WaitFor(t, "the on-start hook", time.Minute, func() bool { _, err := os.Stat(ready); return err == nil })
	time.Sleep(5 * time.Second) // past the 4 s duration: only renewals keep the Lease
	code, out := lwRun(t, b.lw, time.Minute, "kube", "run", "hooked", "--kubeconfig", s.Kubeconfig(kubetest.Runner), "--namespace", kubetest.Namespace, "--", "true")
	if code != 75 || !strings.Contains(out, "first") {
		t.Fatalf("rival during the on-start hook: want 75 naming the holder, have %d:\n%s", code, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran before the on-start hook ended")
	}
	os.WriteFile(gone, nil, 0o644)
	if code := p.wait(t, time.Minute); code != 5 {
		t.Fatalf("want the command's 5, have %d:\n%s", code, p.output())
	}
	env := envOf(t, startEnv)
	for k, v := range map[string]string{"LEASEWRAP_KIND": "kube", "LEASEWRAP_KEY": kubetest.Namespace + "/hooked", "LEASEWRAP_HOLDER": "first", "LEASEWRAP_OUTCOME": "started", "LEASEWRAP_FENCE": "0"} {
		if env[k] != v {
			t.Errorf("on-start: want %s=%s, have %q", k, v, env[k])
		}
	}
	if b, _ := os.ReadFile(exitFile); string(b) != "ran 5\n" {
		t.Fatalf("on-exit: want \"ran 5\", have %q", b)
	}
	if h := holderOf(getLease(t, s, "hooked")); h != "" {
		t.Fatalf("want the Lease released, have holder %q", h)
	}
}
