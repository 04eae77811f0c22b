package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/kube/internal/kubetest"
)

// TestKubeStalledHolderNeverGetsASecondGrace (issue 23.0, measured there
// with 1.2 s of overlap): a holder whose leasewrap-kube is stopped
// (SIGSTOP) and continued past its fence, before a waiter may judge the
// Lease expired, must have its TERM-ignoring job dead by the kill deadline
// fixed from its last renewal (its start + TTL - margin), as
// docs/KUBERNETES.md promises, never a fresh --kill-grace after it
// resumes; checked on the history both jobs write. TTL 8 s, grace 3 s,
// margin 1 s, renewals every 0.5 s; the waiter, started after the stop,
// may take the Lease no earlier than 8 s after it first read it; the
// holder resumes 6.5 s after the stop. A second grace would SIGKILL its
// job 9.5 s after the stop.
//
// Then --timeout on the same Lease: the job is stopped, the Lease
// released at once (the next run takes it without waiting), exit 124.
func TestKubeStalledHolderNeverGetsASecondGrace(t *testing.T) {
	s := kubetest.Start(t)
	b := build(t)
	hist := filepath.Join(t.TempDir(), "history")
	timing := []string{"--ttl", "8s", "--kill-grace", "3s", "--renew-every", "500ms"}
	holder := wrap(t, b, s, kubetest.Runner, "stall", timing, nil, "sh", "-c", testutil.AliveJob(hist, "A", true, -1))
	waitFile(t, hist, time.Minute)
	time.Sleep(time.Second) // renewals
	holder.Cmd.Process.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	defer holder.Cmd.Process.Signal(syscall.SIGCONT)
	waiter := wrap(t, b, s, kubetest.Runner, "stall", append(timing, "--wait", "60s"), nil, "sh", "-c", testutil.AliveJob(hist, "B", false, 25))
	time.Sleep(time.Until(stopped.Add(6500 * time.Millisecond)))
	holder.Cmd.Process.Signal(syscall.SIGCONT)
	if code := holder.wait(t, 30*time.Second); code != 76 || !strings.Contains(holder.output(), "stalled") {
		t.Fatalf("holder: want 76 with the stall named, have %d:\n%s", code, holder.output())
	}
	if code := waiter.wait(t, time.Minute); code != 0 {
		t.Fatalf("waiter: want 0, have %d:\n%s", code, waiter.output())
	}
	testutil.NoOverlap(t, hist, "A", "B")

	limited := wrap(t, b, s, kubetest.Runner, "stall", []string{"--timeout", "1s"}, nil, "sh", "-c", "sleep 60")
	if code := limited.wait(t, 30*time.Second); code != 124 || !strings.Contains(limited.output(), "--timeout") {
		t.Fatalf("--timeout: want 124 naming it, have %d:\n%s", code, limited.output())
	}
	next := wrap(t, b, s, kubetest.Runner, "stall", nil, nil, "true")
	if code := next.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("after a timed-out run the Lease must be free: want 0, have %d:\n%s", code, next.output())
	}
}
