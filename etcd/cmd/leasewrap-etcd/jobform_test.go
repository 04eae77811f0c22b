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

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
	"github.com/leasewrap/leasewrap/internal/cgroup"
	"github.com/leasewrap/leasewrap/internal/procstat"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// needCgroup skips where no job cgroup can be created, except under CI
// (root on a cgroup v2 host), where that is a failure.
func needCgroup(t *testing.T) {
	t.Helper()
	_, err := cgroup.Parent()
	testutil.Need(t, "a cgroup v2 directory", err)
}

// waitExited waits up to d (stretched by testutil.Scale) for pid to be
// gone (reaped), failing after.
func waitExited(t *testing.T, pid int, d time.Duration, out fmt.Stringer) {
	t.Helper()
	if err := testutil.Poll(d, func() bool { _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); return err != nil }); err != nil {
		t.Fatalf("pid %d still there: %v:\n%s", pid, err, out)
	}
}

// buildLeasewrap builds the root module's leasewrap into dir.
func buildLeasewrap(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "leasewrap")
	build := exec.Command("go", "build", "-o", bin, "./cmd/leasewrap")
	build.Dir = filepath.Join("..", "..", "..") // the root module
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build leasewrap: %v\n%s", err, out)
	}
	return bin
}

// Issue 17's first repro on etcd: `lock run L --kill-grace … -- leasewrap
// claim run in --root R --ttl 0 -- sh -c 'trap "" TERM; sleep 30'`, and
// the lock's lease is revoked. The inner wrapper's command must be gone
// when the outer exits 76, in both job forms, before the next holder of
// the lock starts.
func TestNestedLockEndsWithTheRevokedOuterLease(t *testing.T) {
	lw := buildLeasewrap(t, t.TempDir())
	for _, form := range []string{"cgroup", "pgroup"} {
		t.Run(form, func(t *testing.T) {
			if form == "cgroup" {
				needCgroup(t)
			}
			c := etcdtest.Start(t, etcdtest.Options{})
			cli := c.Client(t)
			pidFile, envFile := tmp(t, "pid"), tmp(t, "env")
			inner := []string{"claim", "run", "in", "--root", t.TempDir(), "--ttl", "0", "--job", form, "--", "sh", "-c",
				fmt.Sprintf(`trap "" TERM; echo $$ > %[1]s.tmp; mv %[1]s.tmp %[1]s; exec sleep 30`, pidFile)}
			outer := fmt.Sprintf(`echo $LEASEWRAP_LEASE_ID > %s; exec "$0" "$@"`, envFile)
			args := lockArgs("outer", c.Endpoints(), append([]string{"--job", form}, fast...),
				append([]string{"sh", "-c", outer, lw}, inner...)...)
			w := startLW(t, nil, args...)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("outer's output:\n%s", w.out.String())
				}
			})
			pid := readPID(t, pidFile)
			id, err := strconv.ParseInt(strings.TrimSpace(waitFile(t, envFile, time.Second)), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cli.Revoke(context.Background(), clientv3.LeaseID(id)); err != nil {
				t.Fatal(err)
			}
			waitExited(t, w.Cmd.Process.Pid, 20*time.Second, &w.out)
			if procstat.Running(pid) {
				t.Fatalf("the inner wrapper's command %d outlived the outer's revoked lease", pid)
			}
			if code := w.wait(t, 10*time.Second); code != 76 {
				t.Fatalf("want 76, have %d:\n%s", code, w.out.String())
			}
			// The next holder of the outer lock runs now, alone.
			if code, log := runLW(t, nil, lockArgs("outer", c.Endpoints(), nil, "true")...); code != 0 {
				t.Fatalf("next holder: want 0, have %d:\n%s", code, log)
			}
		})
	}
}

// A SIGKILLed leasewrap's job guard kills the job cgroup: a setsid'd
// descendant, which the process-group guard never reached, dies too; the
// guard then removes the cgroup.
func TestWrapperSIGKILLTakesASetsidDescendantAlong(t *testing.T) {
	needCgroup(t)
	c := etcdtest.Start(t, etcdtest.Options{})
	pidFile := tmp(t, "pid")
	script := fmt.Sprintf(`setsid sh -c 'trap "" TERM; echo $$ > %[1]s.tmp; mv %[1]s.tmp %[1]s; exec sleep 60' & exec sleep 60`, pidFile)
	w := startLW(t, nil, lockArgs("kill-esc", c.Endpoints(), append([]string{"--job", "cgroup"}, fast...), "sh", "-c", script)...)
	pid := readPID(t, pidFile)
	parent, err := cgroup.Parent()
	if err != nil {
		t.Fatal(err)
	}
	pattern := filepath.Join(parent, fmt.Sprintf("%s%d-*", cgroup.Prefix, w.Cmd.Process.Pid))
	if cgs, _ := filepath.Glob(pattern); len(cgs) != 1 {
		t.Fatalf("want the wrapper's one job cgroup at %s, have %v", pattern, cgs)
	}
	w.Cmd.Process.Kill() // the wrapper only, not its group
	gone := waitGone(t, pid, 5*time.Second)
	t.Logf("wrapper SIGKILLed: setsid'd descendant gone after %v", gone)
	testutil.WaitFor(t, "the guard to remove the job cgroup "+pattern, 10*time.Second, func() bool { left, _ := filepath.Glob(pattern); return len(left) == 0 })
}
