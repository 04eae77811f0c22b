package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// TestLockHooks: an on-start hook that outlasts the lock's TTL keeps the
// lock (it is renewed meanwhile: a rival that tries after the TTL finds
// it held), sees the lock's environment, and the command runs after it;
// on-exit runs once the lock key is gone and says ran and the status.
func TestLockHooks(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	dir := t.TempDir()
	ready, gone, marker := filepath.Join(dir, "ready"), filepath.Join(dir, "gone"), filepath.Join(dir, "ran")
	startEnv, exitEnv := filepath.Join(dir, "start.env"), filepath.Join(dir, "exit.env")
	onStart := fmt.Sprintf("env > %s; echo > %s; while [ ! -e %s ]; do sleep 0.02; done", startEnv, ready, gone)
	onExit := fmt.Sprintf("echo \"$LEASEWRAP_OUTCOME $LEASEWRAP_EXIT_CODE\" > %s", exitEnv)
	w := startLW(t, nil, lockArgs("hooked", c.Endpoints(), append(fast, "--on-start", onStart, "--on-exit", onExit),
		"sh", "-c", fmt.Sprintf("touch %s; exit 5", marker))...)
	waitFile(t, ready, 20*time.Second)
	time.Sleep(5 * time.Second) // past the 4 s TTL: only renewals keep the lock
	if code, log := runLW(t, nil, lockArgs("hooked", c.Endpoints(), nil, "true")...); code != 75 {
		t.Fatalf("rival during the on-start hook: want 75 (held), have %d:\n%s", code, log)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the command ran before the on-start hook ended")
	}
	os.WriteFile(gone, nil, 0o644)
	if code := w.wait(t, 30*time.Second); code != 5 {
		t.Fatalf("want the command's 5, have %d:\n%s", code, w.out.String())
	}
	env, _ := os.ReadFile(startEnv)
	for _, want := range []string{"ETCD_LOCK_KEY=hooked/", "LEASEWRAP_FENCE=", "LEASEWRAP_KIND=lock", "LEASEWRAP_KEY=hooked", "LEASEWRAP_OUTCOME=started"} {
		if !strings.Contains("\n"+string(env), "\n"+want) {
			t.Errorf("on-start env lacks %s", want)
		}
	}
	if b, _ := os.ReadFile(exitEnv); string(b) != "ran 5\n" {
		t.Fatalf("on-exit: want \"ran 5\", have %q", b)
	}
	if n := countKeys(t, cli, "hooked/"); n != 0 {
		t.Fatalf("want the lock released, have %d keys", n)
	}
}

// TestLockOnExitAfterRevoke: the lock's lease is revoked while the job
// runs; on-exit runs once the job is dead and says lost, 76.
func TestLockOnExitAfterRevoke(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	pidFile, envFile, seen := tmp(t, "pid"), tmp(t, "env"), tmp(t, "seen")
	onExit := testutil.OnExitProbe(pidFile, seen)
	w := startLW(t, nil, lockArgs("rvh", c.Endpoints(), append(fast, "--on-exit", onExit), "sh", "-c",
		fmt.Sprintf("echo $LEASEWRAP_LEASE_ID > %s; echo $$ > %s.tmp; mv %s.tmp %s; exec sleep 30", envFile, pidFile, pidFile, pidFile))...)
	readPID(t, pidFile)
	id, _ := strconv.ParseInt(strings.TrimSpace(waitFile(t, envFile, time.Second)), 16, 64)
	if _, err := cli.Revoke(context.Background(), clientv3.LeaseID(id)); err != nil {
		t.Fatal(err)
	}
	if code := w.wait(t, 20*time.Second); code != 76 {
		t.Fatalf("want 76 after the revoke, have %d:\n%s", code, w.out.String())
	}
	if b, _ := os.ReadFile(seen); string(b) != "lost 76 dead\n" {
		t.Fatalf("on-exit: want \"lost 76 dead\", have %q\n%s", b, w.out.String())
	}
}
