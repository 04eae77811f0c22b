package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
)

func TestLockEnvAndPasswordScrubbed(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	out := tmp(t, "env")
	code, log := runLW(t, []string{"ETCDCTL_PASSWORD=", "SOME_SECRET_MARKER=1"},
		lockArgs("envlock", c.Endpoints(), nil, "sh", "-c", "env > "+out)...)
	if code != 0 {
		t.Fatalf("want exit 0, have %d:\n%s", code, log)
	}
	env := waitFile(t, out, time.Second)
	for _, want := range []string{"ETCD_LOCK_KEY=envlock/", "ETCD_LOCK_REV=", "LEASEWRAP_FENCE=", "LEASEWRAP_LEASE_ID=", "LEASEWRAP_ETCD_ENDPOINTS=" + c.Endpoints()[0], "LEASEWRAP_KIND=lock", "LEASEWRAP_KEY=envlock"} {
		if !strings.Contains(env, "\n"+want) && !strings.HasPrefix(env, want) {
			t.Errorf("child env lacks %s", want)
		}
	}
	if strings.Contains(env, "ETCDCTL_PASSWORD") {
		t.Errorf("the password variable reached the child")
	}
	if n := countKeys(t, c.Client(t), "envlock/"); n != 0 {
		t.Fatalf("want the lock key released, have %d keys", n)
	}
}

func TestLockTryLockAndWaitDeadline(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	pidFile := tmp(t, "pid")
	holder := startLW(t, nil, lockArgs("try", c.Endpoints(), nil, pidJob(pidFile, 30)...)...)
	readPID(t, pidFile)
	if code, log := runLW(t, nil, lockArgs("try", c.Endpoints(), nil, "true")...); code != 75 {
		t.Fatalf("try-lock while held: want 75, have %d:\n%s", code, log)
	}
	if code, log := runLW(t, nil, lockArgs("try", c.Endpoints(), []string{"--wait", "300ms", "--conflict-exit-code", "9"}, "true")...); code != 9 {
		t.Fatalf("wait with deadline: want --conflict-exit-code 9, have %d:\n%s", code, log)
	}
	// Nothing left behind by the waiters: one key, one lease.
	if n := countKeys(t, cli, "try/"); n != 1 {
		t.Fatalf("want only the holder's key, have %d", n)
	}
	if ls, _ := cli.Leases(context.Background()); len(ls.Leases) != 1 {
		t.Fatalf("want only the holder's lease, have %d", len(ls.Leases))
	}
	// A waiter that gets SIGTERM also removes its queue key.
	w := startLW(t, nil, lockArgs("try", c.Endpoints(), []string{"--wait", "1m"}, "true")...)
	waitKeys(t, cli, "try/", 2)
	w.Cmd.Process.Signal(syscall.SIGTERM)
	w.wait(t, 10*time.Second)
	if n := countKeys(t, cli, "try/"); n != 1 {
		t.Fatalf("want the signalled waiter's key gone, have %d keys", n)
	}
	syscall.Kill(-holder.Cmd.Process.Pid, syscall.SIGTERM)
	holder.wait(t, 20*time.Second)
}

func TestLockFIFOAcrossProcesses(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	order := tmp(t, "order")
	gate := tmp(t, "gate")
	// The first holder waits for the gate file, so all waiters queue.
	first := startLW(t, nil, lockArgs("fifo", c.Endpoints(), nil, "sh", "-c",
		fmt.Sprintf("while [ ! -e %s ]; do sleep 0.01; done; echo 0 >> %s", gate, order))...)
	waitKeys(t, cli, "fifo/", 1)
	var ws []*wrapper
	for i := 1; i <= 4; i++ {
		ws = append(ws, startLW(t, nil, lockArgs("fifo", c.Endpoints(), []string{"--wait", "1m"}, "sh", "-c", fmt.Sprintf("echo %d >> %s", i, order))...))
		waitKeys(t, cli, "fifo/", int64(i+1))
	}
	os.WriteFile(gate, nil, 0o644)
	first.wait(t, 30*time.Second)
	for _, w := range ws {
		if code := w.wait(t, 30*time.Second); code != 0 {
			t.Fatalf("waiter exit %d:\n%s", code, w.out.String())
		}
	}
	if have := strings.Fields(waitFile(t, order, time.Second)); strings.Join(have, " ") != "0 1 2 3 4" {
		t.Fatalf("want FIFO order 0 1 2 3 4, have %v", have)
	}
}

func TestLockRevokeStopsJob(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	pidFile, envFile := tmp(t, "pid"), tmp(t, "env")
	w := startLW(t, nil, lockArgs("rv", c.Endpoints(), fast, "sh", "-c",
		fmt.Sprintf("echo $LEASEWRAP_LEASE_ID > %s; echo $$ > %s.tmp; mv %s.tmp %s; exec sleep 30", envFile, pidFile, pidFile, pidFile))...)
	pid := readPID(t, pidFile)
	id, _ := strconv.ParseInt(strings.TrimSpace(waitFile(t, envFile, time.Second)), 16, 64)
	start := time.Now()
	if _, err := cli.Revoke(context.Background(), clientv3.LeaseID(id)); err != nil {
		t.Fatal(err)
	}
	gone := waitGone(t, pid, 1*time.Second+2*time.Second) // kill grace + detection
	if code := w.wait(t, 10*time.Second); code != 76 {
		t.Fatalf("want 76 after the revoke, have %d:\n%s", code, w.out.String())
	}
	// The kind's own reason (lease.LossCause or Renew's), not a generic one.
	if out := w.out.String(); !strings.Contains(out, "was deleted at revision") && !strings.Contains(out, "expired or revoked") {
		t.Fatalf("want the loss's reason named, have:\n%s", out)
	}
	t.Logf("revoke -> child gone in %v, wrapper exit 76 after %v | %s", gone, w.Ended().Sub(start), lastLineOf(w.out.String()))
}

func TestLockServerPausedFencesBeforeTTL(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	pidFile := tmp(t, "pid")
	w := startLW(t, nil, lockArgs("pause", c.Endpoints(), fast, pidJob(pidFile, 60)...)...)
	pid := readPID(t, pidFile)
	time.Sleep(700 * time.Millisecond) // a renewal or two
	c.Members[0].Stop()
	defer c.Members[0].Cont()
	// The lease cannot expire before (last successful renewal) + TTL, and
	// the last renewal started at most a period (+ jitter) before the
	// pause: the child must be gone before stop + TTL - period.
	gone := waitGone(t, pid, 4*time.Second-500*time.Millisecond)
	c.Members[0].Cont()
	if code := w.wait(t, 15*time.Second); code != 76 {
		t.Fatalf("want 76, have %d:\n%s", code, w.out.String())
	}
	t.Logf("server paused: child gone %v after the pause (TTL 4s, fence 2s after the last renewal)", gone)
}

func TestLockServerRestartKeepsJob(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	started := tmp(t, "started")
	args := lockArgs("restart", c.Endpoints(), []string{"--ttl", "8s", "--kill-grace", "1s", "--renew-every", "500ms"},
		"sh", "-c", "echo x > "+started+"; sleep 9") // past the fence (6 s): renewals must resume
	w := startLW(t, nil, args...)
	waitFile(t, started, 20*time.Second)
	c.Members[0].Kill()
	c.Members[0].Restart()
	if code := w.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("renewals resumed before the fence: want exit 0, have %d:\n%s", code, w.out.String())
	}
}

func TestLockLeaderLossKeepsJob(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{Members: 3})
	started := tmp(t, "started")
	// A TTL of 6 s with a 1 s kill grace puts the fence 4 s after the last
	// renewal; the job runs 8 s, so renewals must succeed after the
	// fail-over (the default TTL, 30 s, leaves far more room).
	w := startLW(t, nil, lockArgs("leader", c.Endpoints(), []string{"--ttl", "6s", "--kill-grace", "1s", "--renew-every", "1s"},
		"sh", "-c", "echo x > "+started+"; sleep 8")...)
	waitFile(t, started, 20*time.Second)
	c.Leader(t).Kill()
	if code := w.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("lease must survive the leader's loss: want exit 0, have %d:\n%s", code, w.out.String())
	}
}

func TestLockTLS(t *testing.T) {
	certs := etcdtest.GenerateTLS(t)
	c := etcdtest.Start(t, etcdtest.Options{TLS: certs})
	tlsArgs := []string{"--cacert", certs.CA, "--cert", certs.ClientCert, "--key", certs.ClientKey}
	if code, log := runLW(t, nil, lockArgs("tls", c.Endpoints(), tlsArgs, "true")...); code != 0 {
		t.Fatalf("over TLS: want 0, have %d:\n%s", code, log)
	}
	// Without a client certificate the server refuses: 77, nothing ran.
	ran := tmp(t, "ran")
	code, log := runLW(t, nil, lockArgs("tls", c.Endpoints(), []string{"--cacert", certs.CA, "--dial-timeout", "1s"}, "touch", ran)...)
	if code != 77 {
		t.Fatalf("TLS refused: want 77, have %d:\n%s", code, log)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the command ran although TLS was refused")
	}
}

func TestUnreachableAndUsage(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	if code, log := runLW(t, nil, lockArgs("x", []string{dead}, []string{"--dial-timeout", "300ms"}, "true")...); code != 69 {
		t.Fatalf("unreachable: want 69, have %d:\n%s", code, log)
	}
	for _, bad := range [][]string{{"--ttl", "1500ms"}, {"--ttl", "5s", "--kill-grace", "10s"}, {"--user", "root:secret"}} {
		if code, log := runLW(t, nil, lockArgs("x", []string{dead}, bad, "true")...); code != 64 {
			t.Fatalf("%v: want 64, have %d:\n%s", bad, code, log)
		}
	}
}

func TestWrapperSIGKILLTakesJobAlong(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	pidFile := tmp(t, "pid")
	w := startLW(t, nil, lockArgs("kill", c.Endpoints(), fast, pidJob(pidFile, 60)...)...)
	pid := readPID(t, pidFile)
	w.Cmd.Process.Kill() // the wrapper only, not its group
	gone := waitGone(t, pid, 2*time.Second)
	t.Logf("wrapper SIGKILLed: child gone after %v", gone)
}

// TestLockLongWaitThenHold: a waiter that queued for longer than its own
// fence (TTL - grace - margin) must still run once it gets the lock: its
// lease was kept alive while it queued, so the fence counts from the last
// keep-alive, not from when the wait began.
func TestLockLongWaitThenHold(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	pidFile := tmp(t, "pid")
	holder := startLW(t, nil, lockArgs("long", c.Endpoints(), fast, pidJob(pidFile, 3)...)...)
	readPID(t, pidFile)
	if code, out := runLW(t, nil, lockArgs("long", c.Endpoints(), append([]string{"--wait", "30s"}, fast...), "sleep", "1")...); code != 0 {
		t.Fatalf("waiter that queued 3s (fence 2s): want 0, have %d:\n%s", code, out)
	}
	holder.wait(t, 10*time.Second)
}

// TestLockServerDownPastFence: a server that stays down past the fence
// gets the job stopped (76) before the lease could have lapsed; after the
// restart nothing renews the old lease (it expires there).
func TestLockServerDownPastFence(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	pidFile := tmp(t, "pid")
	w := startLW(t, nil, lockArgs("down", c.Endpoints(), fast, pidJob(pidFile, 60)...)...)
	pid := readPID(t, pidFile)
	time.Sleep(700 * time.Millisecond)
	c.Members[0].Kill()
	gone := waitGone(t, pid, 4*time.Second-500*time.Millisecond)
	if code := w.wait(t, 15*time.Second); code != 76 {
		t.Fatalf("want 76, have %d:\n%s", code, w.out.String())
	}
	c.Members[0].Restart()
	// The old key goes with its lease; nothing of the fenced wrapper renews it.
	deadline := time.Now().Add(15 * time.Second)
	for countKeys(t, c.Client(t), "down/") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the fenced holder's key still exists 15s after the restart")
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("server down: child gone %v after the kill (TTL 4s)", gone)
}
