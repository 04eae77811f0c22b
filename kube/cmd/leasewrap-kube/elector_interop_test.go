package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/kube/internal/kubetest"
)

// TestKubeInteropElector runs leasewrap-kube against client-go's own
// LeaderElector (resourcelock.LeaseLock, in a process of its own) on one
// real API server, in both directions. Lease durations are long where a
// hand-over must come from a release, not an expiry: a bound well below
// the duration tells the two apart.
func TestKubeInteropElector(t *testing.T) {
	s := kubetest.Start(t)
	b := build(t)

	t.Run("ElectorLeadsRunRefusesThenTakesOverOnRelease", func(t *testing.T) {
		e := elect(t, b, s, "i1", "elector-1", "--lease-duration", "30s", "--renew-deadline", "20s", "--retry-period", "1s")
		e.event(t, "started-leading", time.Minute)
		if code := wrap(t, b, s, kubetest.Runner, "i1", nil, nil, "true").wait(t, time.Minute); code != 75 {
			t.Fatalf("kube run while an elector leads: want 75, have %d", code)
		}
		// The elector's identity is a live holder: a run claiming it is a
		// conflict too, not a renewal.
		if code := wrap(t, b, s, kubetest.Runner, "i1", []string{"--identity", "elector-1"}, nil, "true").wait(t, time.Minute); code != 75 {
			t.Fatalf("kube run --identity of the live holder: want 75, have %d", code)
		}
		file := filepath.Join(t.TempDir(), "ran")
		w := wrap(t, b, s, kubetest.Runner, "i1", []string{"--wait", "2m"}, nil, shJob(file, "true")...)
		time.Sleep(3 * time.Second) // the elector renews meanwhile; the waiter must not run
		if _, err := os.Stat(file); err == nil {
			t.Fatal("the waiting run ran while the elector led")
		}
		e.Cmd.Process.Signal(syscall.SIGTERM) // ReleaseOnCancel
		released := e.event(t, "exit", time.Minute)
		fence, _ := readShJob(t, file, 2*time.Minute)
		ran := time.Now()
		if code := w.wait(t, time.Minute); code != 0 {
			t.Fatalf("the waiting run: want 0, have %d:\n%s", code, w.output())
		}
		// A release frees the lease at once; an expiry would take 30 s.
		if d := ran.Sub(time.Unix(0, released.UnixNano)); d > 15*time.Second {
			t.Errorf("the waiting run started %v after the elector released (lease duration 30s): not at once", d)
		} else {
			t.Logf("hand-over elector -> leasewrap on release: %v (file polled every 10 ms)", d)
		}
		if fence != 1 {
			t.Errorf("LEASEWRAP_FENCE: want 1 (the elector created the lease with 0), have %d", fence)
		}
		l := getLease(t, s, "i1")
		if holderOf(l) != "" || l.Spec.LeaseDurationSeconds == nil || *l.Spec.LeaseDurationSeconds != 1 || transitionsOf(l) != 1 {
			t.Errorf("after leasewrap's release: want client-go's release record (holder \"\", duration 1, transitions 1), have %+v", l.Spec)
		}
	})

	t.Run("RunHoldsElectorDoesNotLead", func(t *testing.T) {
		// TTL 4 s, held for 8 s: only renewals client-go sees as changes
		// keep the elector off.
		lw := watchLease(t, s, "i2")
		dir := t.TempDir()
		file, stop := filepath.Join(dir, "ran"), filepath.Join(dir, "stop")
		w := wrap(t, b, s, kubetest.Runner, "i2", []string{"--ttl", "4s", "--kill-grace", "1s", "--identity", "lw-2"}, nil, shJob(file, untilFile(stop))...)
		readShJob(t, file, time.Minute)
		e := elect(t, b, s, "i2", "elector-2", "--lease-duration", "4s", "--renew-deadline", "3s", "--retry-period", "500ms")
		if l := e.event(t, "new-leader", time.Minute).Leader; l != "lw-2" {
			t.Fatalf("the elector sees leader %q, want lw-2", l)
		}
		e.noEvent(t, "started-leading", 8*time.Second) // two TTLs
		if !w.Running() {
			t.Fatalf("leasewrap ended early (%d):\n%s", w.Code(), w.output())
		}
		os.WriteFile(stop, nil, 0o644)
		if code := w.wait(t, time.Minute); code != 0 {
			t.Fatalf("kube run: want 0, have %d:\n%s", code, w.output())
		}
		e.event(t, "started-leading", time.Minute)
		l := getLease(t, s, "i2")
		if holderOf(l) != "elector-2" || transitionsOf(l) != 1 {
			t.Errorf("after the elector took over: want holder elector-2 with transitions 1, have %+v", l.Spec)
		}
		if !released(lw, "lw-2") {
			t.Errorf("leasewrap did not write client-go's release record before the elector took over; versions seen: %d", len(lw.seen))
		}
	})

	t.Run("RunReleasesElectorTakesOverAtOnce", func(t *testing.T) {
		dir := t.TempDir()
		file, stop := filepath.Join(dir, "ran"), filepath.Join(dir, "stop")
		w := wrap(t, b, s, kubetest.Runner, "i3", []string{"--ttl", "30s", "--identity", "lw-3"}, nil, shJob(file, untilFile(stop))...)
		readShJob(t, file, time.Minute)
		e := elect(t, b, s, "i3", "elector-3", "--lease-duration", "30s", "--renew-deadline", "20s", "--retry-period", "1s")
		if l := e.event(t, "new-leader", time.Minute).Leader; l != "lw-3" {
			t.Fatalf("the elector sees leader %q, want lw-3", l)
		}
		os.WriteFile(stop, nil, 0o644)
		if code := w.wait(t, time.Minute); code != 0 {
			t.Fatalf("kube run: want 0, have %d:\n%s", code, w.output())
		}
		lead := e.event(t, "started-leading", time.Minute)
		// An expiry would take 30 s; the elector retries every second.
		if d := time.Unix(0, lead.UnixNano).Sub(w.Ended()); d > 15*time.Second {
			t.Errorf("the elector led %v after leasewrap ended (lease duration 30s): not at once", d)
		} else {
			t.Logf("hand-over leasewrap -> elector on release: %v (its retry period 1s)", d)
		}
	})

	t.Run("TransitionsAsClientGoWritesThem", func(t *testing.T) {
		// elector, leasewrap, elector, leasewrap, each after the other's
		// release: leaseTransitions 0 (created), 1, 2, 3.
		var fences []int64
		for i := range 4 {
			if i%2 == 0 {
				e := elect(t, b, s, "i4", fmt.Sprintf("elector-4-%d", i), "--hold", "300ms", "--retry-period", "500ms", "--renew-deadline", "1s", "--lease-duration", "15s")
				e.event(t, "started-leading", time.Minute)
				e.event(t, "exit", time.Minute)
				fences = append(fences, int64(transitionsOf(getLease(t, s, "i4"))))
				continue
			}
			file := filepath.Join(t.TempDir(), "ran")
			if code := wrap(t, b, s, kubetest.Runner, "i4", nil, nil, shJob(file, "true")...).wait(t, time.Minute); code != 0 {
				t.Fatalf("kube run %d: want 0, have %d", i, code)
			}
			f, _ := readShJob(t, file, time.Second)
			fences = append(fences, f)
		}
		if fmt.Sprint(fences) != "[0 1 2 3]" {
			t.Errorf("leaseTransitions / LEASEWRAP_FENCE across elector, leasewrap, elector, leasewrap: want [0 1 2 3], have %v", fences)
		}
	})

	t.Run("ConnectionExitCodes", func(t *testing.T) {
		for _, c := range []struct {
			user kubetest.User
			want int
		}{{kubetest.NoGrants, 77}, {kubetest.BadToken, 77}} {
			file := filepath.Join(t.TempDir(), "ran")
			w := wrap(t, b, s, c.user, "i5", nil, nil, "touch", file)
			if code := w.wait(t, time.Minute); code != c.want {
				t.Errorf("%s: want %d, have %d:\n%s", c.user, c.want, code, w.output())
			}
			if _, err := os.Stat(file); err == nil {
				t.Errorf("%s: the command ran", c.user)
			}
		}
		// A kubeconfig whose server is a closed loopback port: 69.
		kc, err := os.ReadFile(s.Kubeconfig(kubetest.Runner))
		if err != nil {
			t.Fatal(err)
		}
		closed := filepath.Join(t.TempDir(), "kubeconfig")
		os.WriteFile(closed, []byte(strings.Replace(string(kc), s.URL, "https://127.0.0.1:1", 1)), 0o600)
		w := startProc(t, b.lw, nil, "kube", "run", "i5", "--kubeconfig", closed, "--request-timeout", "2s", "--", "true")
		if code := w.wait(t, time.Minute); code != 69 {
			t.Errorf("closed port: want 69, have %d:\n%s", code, w.output())
		}
	})
}

// untilFile is a shell loop that ends when path exists.
func untilFile(path string) string {
	return fmt.Sprintf("while [ ! -e %s ]; do sleep 0.05; done", path)
}

// released reports whether holder wrote client-go's release record
// (holderIdentity "", leaseDurationSeconds 1) right after a version it
// held.
func released(lw *leaseWatch, holder string) bool {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	for i := 1; i < len(lw.seen); i++ {
		prev, s := lw.seen[i-1], lw.seen[i]
		if prev.HolderIdentity != nil && *prev.HolderIdentity == holder &&
			(s.HolderIdentity == nil || *s.HolderIdentity == "") && s.LeaseDurationSeconds != nil && *s.LeaseDurationSeconds == 1 {
			return true
		}
	}
	return false
}
