package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/internal/testutil/httpload"
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

	// Lost: the claim is replaced. Until leasewrap exits, /readyz says so;
	// /healthz, liveness, stays 200 (leasewrap stops the job and exits by
	// itself) and says the lease was lost.
	if err := os.WriteFile(claimFile(root, "job"), []byte(claimYAML("job", "thief", os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	var rcode int
	waitFor(t, "/readyz to turn 503", func() bool {
		rcode, _ = testutil.Get(addr, "/readyz")
		return rcode != 200
	})
	if rcode == 503 { // still running: in the kill grace
		if code, body := testutil.Get(addr, "/healthz"); code != 200 && code != 0 || code == 200 && !strings.Contains(body, "lost") {
			t.Fatalf("lost: /healthz want 200 saying lost, have %d %q", code, body)
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

// TestListenHealthUnderLoad: with 1,000 slow or idle connections open
// (a request head a byte every 0.3 s, or nothing), and under a flood of
// connections, every /healthz and /readyz probe gets the true answer; the
// memory of leasewrap stays bounded; the job, its exit code and its lease
// are untouched. The bound here is loose (5 s a probe, 64 MiB) for a
// loaded machine: bench/healthload measures the 1 s contract strictly.
func TestListenHealthUnderLoad(t *testing.T) {
	dir := t.TempDir()
	ready, gone := filepath.Join(dir, "ready"), filepath.Join(dir, "gone")
	p := startLW(t, nil, "flock", "run", filepath.Join(dir, "job.lock"), "--listen", "127.0.0.1:0", "--", "sh", "-c", holdUntil(ready, gone)+"; exit 7")
	addr := listenAddr(t, p)
	waitFor(t, "child ready", func() bool { return exists(ready) })
	// A flock has no TTL: its look at the lock is a check, not a renewal.
	if _, body := testutil.Get(addr, "/metrics"); !strings.Contains(body, "leasewrap_lease_checks_total{") || strings.Contains(body, "leasewrap_renewals_total") {
		t.Fatalf("a flock's /metrics: want checks, no renewals:\n%s", body)
	}
	probe := func(phase string) time.Duration {
		t.Helper()
		var worst time.Duration
		for i := range 10 {
			for path, want := range map[string]string{"/healthz": "ok", "/readyz": "lease held"} {
				code, body, took, err := httpload.Probe(addr, path, 5*time.Second)
				if err != nil || code != 200 || !strings.Contains(body, want) {
					t.Fatalf("%s, probe %d of %s: want 200 %q, have %d %q after %v (%v)", phase, i, path, want, code, body, took, err)
				}
				worst = max(worst, took)
			}
			time.Sleep(50 * time.Millisecond)
		}
		return worst
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	slow := httpload.Slow(ctx, addr, 500, 300*time.Millisecond)
	idle := httpload.Slow(ctx, addr, 500, 0)
	waitFor(t, "1,000 connections open", func() bool { return slow.Open()+idle.Open() >= 1000 })
	t.Logf("1,000 slow and idle connections: slowest probe %v", probe("1,000 slow and idle connections"))
	slow.Stop()
	idle.Stop()

	fctx, fcancel := context.WithTimeout(ctx, 3*time.Second)
	defer fcancel()
	flooded := make(chan int64, 1)
	go func() { flooded <- httpload.Flood(fctx, addr, 32, 20000) }()
	t.Logf("a flood: slowest probe %v", probe("a flood"))
	t.Logf("the flood opened %d connections", <-flooded)

	// The lease was looked after throughout: no check failed.
	if _, body := testutil.Get(addr, "/metrics"); !strings.Contains(body, `leasewrap_lease_checks_total{kind="flock",key="`+filepath.Join(dir, "job.lock")+`",result="error"} 0`+"\n") {
		t.Errorf("after the load: want no failed lease check:\n%s", body)
	}
	hwm := vmHWM(t, p.Cmd.Process.Pid)
	t.Logf("leasewrap's peak RSS (VmHWM): %d KiB", hwm)
	if hwm > 64<<10 {
		t.Errorf("leasewrap's peak RSS %d KiB: want at most 64 MiB", hwm)
	}
	os.WriteFile(gone, nil, 0o644)
	if have := p.wait(t); have != 7 {
		t.Fatalf("want the job's 7, have %d\n%s", have, &p.stderr)
	}
}

// vmHWM is the peak resident set of pid, in KiB.
func vmHWM(t *testing.T, pid int) int {
	t.Helper()
	for _, l := range strings.Split(string(must(os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)))), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	t.Fatalf("no VmHWM for pid %d", pid)
	return 0
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestReadyBeforeTheCommandStarts: the command's first act is to ask
// leasewrap's /readyz, which must already say the lease is held.
func TestReadyBeforeTheCommandStarts(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "code")
	for _, kind := range [][]string{
		{"flock", "run", filepath.Join(dir, "lock")},
		{"claim", "run", "job", "--root", filepath.Join(dir, "claims")},
	} {
		t.Run(kind[0], func(t *testing.T) {
			args := append(append([]string{}, kind...), "--listen", addr, "--",
				"sh", "-c", "curl -s -o /dev/null -w '%{http_code}' http://"+addr+"/readyz > "+out)
			p := startLW(t, os.Environ(), args...)
			if code := p.wait(t); code != 0 {
				t.Fatalf("want exit 0, have %d; stderr:\n%s", code, p.stderr.String())
			}
			if got := string(must(os.ReadFile(out))); got != "200" {
				t.Fatalf("/readyz from the command's first act: want 200, have %q", got)
			}
		})
	}
}
