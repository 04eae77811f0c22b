package main

import (
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
)

// Zero means zero (issue 17): --kill-grace 0s is a grace of zero, not the
// default 10 s, so `lock run --ttl 2s --kill-grace 0s` is a valid command
// line (it reaches the dial: 69 against a closed port), not a usage error.
func TestLockZeroKillGraceIsAccepted(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	if code, log := runLW(t, nil, lockArgs("x", []string{dead}, []string{"--ttl", "2s", "--kill-grace", "0s", "--dial-timeout", "300ms"}, "true")...); code != 69 {
		t.Fatalf("want 69 (unreachable, the flags accepted), have %d:\n%s", code, log)
	}
}

// once --publish-failures does not publish a run stopped by a signal
// leasewrap passed on (a shutdown, issue 17): a retry runs again. With
// --publish-signalled it does, and a retry replays it.
func TestOncePublishFailuresSkipsAShutdown(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	for _, tc := range []struct {
		key   string
		flags []string
		want  int
	}{
		{"shutdown", []string{"--publish-failures"}, 0},
		{"shutdown-kept", []string{"--publish-failures", "--publish-signalled"}, 143},
	} {
		ready := tmp(t, "ready-"+tc.key)
		w := startLW(t, nil, onceArgs(tc.key, c.Endpoints(), tc.flags, "sh", "-c", fmt.Sprintf("echo x > %s; sleep 60", ready))...)
		waitFile(t, ready, 10*time.Second)
		w.Cmd.Process.Signal(syscall.SIGTERM)
		if code := w.wait(t, 10*time.Second); code != 143 {
			t.Fatalf("%s: want 143, have %d:\n%s", tc.key, code, w.out.String())
		}
		if code, out := runLW(t, nil, onceArgs(tc.key, c.Endpoints(), tc.flags, "true")...); code != tc.want {
			t.Fatalf("%s retry: want %d, have %d:\n%s", tc.key, tc.want, code, out)
		}
	}
}
