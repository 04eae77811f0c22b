package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/internal/testutil/promtest"
)

// listenAddr waits for the "serving" line of a leasewrap started with
// --listen 127.0.0.1:0 and returns the address it bound.
func listenAddr(t *testing.T, p *proc) string {
	t.Helper()
	re := regexp.MustCompile(`serving /metrics, /healthz and /readyz .*addr=(127\.0\.0\.1:\d+)`)
	var addr string
	waitFor(t, "the --listen address on stderr", func() bool {
		if m := re.FindStringSubmatch(p.stderr.String()); m != nil {
			addr = m[1]
			return true
		}
		return false
	})
	return addr
}

// gauge is the value of name in a /metrics body (no labels asked).
func gauge(t *testing.T, body, name string) float64 {
	t.Helper()
	fams := promtest.Parse(t, []byte(body))
	v, ok := promtest.Value(fams, name, nil)
	if !ok {
		t.Fatalf("no %s in /metrics:\n%s", name, body)
	}
	return v
}

// TestListenWhileHeldAndAfterLoss scrapes a claim run's --listen endpoint
// while a second wrapper waits, while the lease is held, and after it is
// lost (the job ignores SIGTERM, so leasewrap still serves during the kill
// grace).
func TestListenWhileHeldAndAfterLoss(t *testing.T) {
	root, env := claimEnv(t)
	ready, pidFile := filepath.Join(root, "ready"), filepath.Join(root, "pid")
	script := "trap '' TERM; echo $$ > " + pidFile + ".tmp; mv " + pidFile + ".tmp " + pidFile + "; touch " + ready + "; while :; do sleep 0.05; done"
	p := startLW(t, env, "claim", "run", "job", "--root", root, "--renew-every", "100ms", "--kill-grace", "3s",
		"--listen", "127.0.0.1:0", "--", "sh", "-c", script)
	addr := listenAddr(t, p)
	waitFor(t, "child ready", func() bool { return exists(ready) })
	pid, _ := strconv.Atoi(strings.TrimSpace(string(must(os.ReadFile(pidFile)))))

	if code, body := testutil.Get(addr, "/readyz"); code != 200 {
		t.Fatalf("held: /readyz want 200, have %d %s", code, body)
	}
	if code, _ := testutil.Get(addr, "/healthz"); code != 200 {
		t.Fatalf("held: /healthz want 200, have %d", code)
	}
	var body string
	waitFor(t, "a successful renewal counted", func() bool {
		_, body = testutil.Get(addr, "/metrics")
		return strings.Contains(body, `leasewrap_renewals_total{kind="claim",key="job",result="ok"} `) &&
			!strings.Contains(body, `result="ok"} 0`+"\n")
	})
	if v := gauge(t, body, "leasewrap_lease_held"); v != 1 {
		t.Fatalf("held: want leasewrap_lease_held 1, have %v", v)
	}
	if v := gauge(t, body, "leasewrap_child_pid"); int(v) != pid {
		t.Fatalf("want leasewrap_child_pid %d, have %v", pid, v)
	}
	if v := gauge(t, body, "leasewrap_fence_seconds"); v <= 0 || v > 120 {
		t.Fatalf("want seconds until the fence in (0, 120], have %v", v)
	}

	// A waiter with its own endpoint: healthy, not ready.
	w := startLW(t, env, "claim", "run", "job", "--root", root, "--wait", "1m", "--listen", "127.0.0.1:0", "--", "true")
	waddr := listenAddr(t, w)
	waitFor(t, "the waiter to say it waits", func() bool {
		_, b := testutil.Get(waddr, "/metrics")
		return strings.Contains(b, "leasewrap_waiting_seconds") && !strings.Contains(b, `leasewrap_waiting_seconds{kind="claim",key="job"} 0`+"\n")
	})
	if code, _ := testutil.Get(waddr, "/readyz"); code != 503 {
		t.Fatalf("waiting: /readyz want 503, have %d", code)
	}
	if code, _ := testutil.Get(waddr, "/healthz"); code != 200 {
		t.Fatalf("waiting: /healthz want 200, have %d", code)
	}
	w.Cmd.Process.Signal(os.Interrupt)
	w.wait(t)

	// Lost: the claim is replaced. Until leasewrap exits, it says so.
	if err := os.WriteFile(claimFile(root, "job"), []byte(claimYAML("job", "thief", os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	var hcode int
	waitFor(t, "/healthz to turn 503", func() bool {
		hcode, _ = testutil.Get(addr, "/healthz")
		return hcode != 200
	})
	if hcode == 503 { // still running: in the kill grace
		if code, _ := testutil.Get(addr, "/readyz"); code != 503 && code != 0 {
			t.Fatalf("lost: /readyz want 503, have %d", code)
		}
		_, body = testutil.Get(addr, "/metrics")
		if strings.Contains(body, "leasewrap_lease_held") && gauge(t, body, "leasewrap_lease_held") != 0 {
			t.Fatalf("lost: want leasewrap_lease_held 0:\n%s", body)
		}
	}
	if have := p.wait(t); have != cli.ExitLost {
		t.Fatalf("want %d, have %d\n%s", cli.ExitLost, have, &p.stderr)
	}
	if code, _ := testutil.Get(addr, "/healthz"); code != 0 {
		t.Fatalf("after exit: want no server, have %d", code)
	}
}

// TestListenRefusesATakenAddress: an address in use is an error before
// anything runs.
func TestListenRefusesATakenAddress(t *testing.T) {
	root, env := claimEnv(t)
	ready := filepath.Join(root, "ready")
	gone := filepath.Join(root, "gone")
	p := startLW(t, env, "claim", "run", "a", "--root", root, "--listen", "127.0.0.1:0", "--", "sh", "-c", holdUntil(ready, gone))
	addr := listenAddr(t, p)
	ran := filepath.Join(root, "ran")
	have, q := runLW(t, env, "claim", "run", "b", "--root", root, "--listen", addr, "--", "touch", ran)
	if have == 0 || exists(ran) || !strings.Contains(q.stderr.String(), "--listen "+addr) {
		t.Fatalf("want a failure naming --listen %s and nothing run, have %d\n%s", addr, have, &q.stderr)
	}
	os.WriteFile(gone, nil, 0o644)
	p.wait(t)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
