package main

import (
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// TestPausedWaiterRenewsBeforeItStarts: a waiter starts its job without a
// renewal only when its last confirmed keep-alive is recent enough for
// the fence rules. One stopped (SIGSTOP) in the queue for longer than that
// (2 s against a fence 2 s after each confirmation, less a 500 ms period)
// while the holder's job ends must renew before its job starts, or, if its
// lease expired meanwhile, lose its place and queue again: never run on
// the stale confirmation. The jobs' history shows no overlap.
func TestPausedWaiterRenewsBeforeItStarts(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	log := tmp(t, "history")
	holder := startLW(t, []string{envJob + "=" + log, envJobSleep + "=1s"}, lockArgs("paused", c.Endpoints(), fast, os.Args[0])...)
	if err := testutil.Poll(20*time.Second, func() bool { return len(readHistory(t, log).jobs) > 0 }); err != nil {
		t.Fatalf("the holder's job never started (%v):\n%s", err, holder.out.String())
	}
	waiter := startLW(t, []string{envJob + "=" + log, envJobSleep + "=10ms"},
		lockArgs("paused", c.Endpoints(), append([]string{"--wait", "30s", "--log-level", "debug"}, fast...), os.Args[0])...)
	waitKeys(t, cli, "paused/", 2)
	pid := waiter.Cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	// The holder's job ends while the waiter is stopped, which stays
	// stopped for 2 s at least (past its fence).
	if code := holder.wait(t, 30*time.Second); code != 0 {
		syscall.Kill(pid, syscall.SIGCONT)
		t.Fatalf("holder: exit %d\n%s", code, holder.out.String())
	}
	time.Sleep(time.Until(stopped.Add(2 * time.Second)))
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code := waiter.wait(t, 40*time.Second); code != 0 {
		t.Fatalf("waiter: exit %d\n%s", code, waiter.out.String())
	}
	out := waiter.out.String()
	h := readHistory(t, log)
	if len(h.jobs) != 2 {
		t.Fatalf("want 2 jobs (holder, waiter), have %d:\n%s", len(h.jobs), out)
	}
	if worst := h.check(t, cli, "counter", nil); worst > 0 {
		t.Fatalf("jobs overlap by %v:\n%s", worst, out)
	}
	// The keep-alive due while it was stopped may win the race with the
	// delete event when it resumes: then the confirmation it starts under
	// is that fresh one, and must be younger than fence - period (1.5 s).
	switch m := regexp.MustCompile(`no renewal first.*confirmed_ago=(\S+)`).FindStringSubmatch(out); {
	case strings.Contains(out, "renewing the lease before the command starts"):
		t.Log("renewed before the start")
	case m != nil:
		if ago, err := time.ParseDuration(m[1]); err != nil || ago >= 1500*time.Millisecond {
			t.Fatalf("started under a confirmation %s old (%v), past fence - period:\n%s", m[1], err, out)
		}
		t.Logf("a keep-alive after the pause won the race; started under it (%s old)", m[1])
	default:
		t.Fatalf("the waiter neither renewed nor started under a recent confirmation:\n%s", out)
	}
}
