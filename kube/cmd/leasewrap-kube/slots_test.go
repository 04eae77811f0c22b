package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/kube/internal/kubetest"
)

// TestKubeSlotsCrowd: a crowd of kube wrappers with --slots 3 (waiters
// and try-once wrappers mixed, two SIGKILLed while their jobs run: the
// jobs die with them and their Leases free once expired) never runs more
// than 3 jobs at once, never two in one slot; kube holder --slots 3 shows
// a holder in each slot while the first round's jobs are held at their
// end (a gate), so a slow machine cannot let the crowd finish first.
func TestKubeSlotsCrowd(t *testing.T) {
	s := kubetest.Start(t)
	b := build(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "history")
	gate := testutil.HoldGate(t, filepath.Join(dir, "gate"))
	job := testutil.GatedSlotJob(log, filepath.Join(dir, "gate"), 0.3)
	killed := testutil.WatchKilled(log)
	flags := func(wait string) []string {
		return []string{"--ttl", "4s", "--kill-grace", "1s", "--renew-every", "500ms", "--skew", "1s", "--slots", "3", "--wait", wait}
	}
	for round := range 2 {
		var ps []*kproc
		for i := range 10 {
			ps = append(ps, wrap(t, b, s, kubetest.Runner, "pool", flags(testutil.CrowdWait(i)), nil, "sh", "-c", job))
		}
		testutil.WaitFor(t, "jobs to start", time.Minute, func() bool {
			b, _ := os.ReadFile(log)
			return strings.Count(string(b), "s ") >= 3*(round+1)
		})
		if round == 0 {
			testutil.WaitFor(t, "kube holder --slots 3 to show a holder in each slot", 30*time.Second, func() bool {
				code, out := lwRun(t, b.lw, time.Minute, "kube", "holder", "pool", "--slots", "3", "--kubeconfig", s.Kubeconfig(kubetest.Runner), "--namespace", kubetest.Namespace)
				var hs []holderJSON
				if err := json.Unmarshal([]byte(out), &hs); err != nil || (code != 0 && code != 1) || len(hs) != 3 {
					t.Fatalf("kube holder --slots 3: want 3 records, have %d (%v):\n%s", code, err, out)
				}
				held := 0
				for i, h := range hs {
					if h.Slot == nil || *h.Slot != i || h.Name != leaseSlotName("pool", i) {
						t.Fatalf("kube holder --slots 3: record %d is not slot %d's:\n%s", i, i, out)
					}
					if h.Held {
						held++
					}
				}
				return held == 3 && code == 0
			})
			gate.Open()
		}
		for _, i := range testutil.CrowdKilled {
			ps[i].Cmd.Process.Signal(syscall.SIGKILL)
		}
		for i, p := range ps {
			if err := testutil.CheckCrowdCode(i, p.wait(t, 2*time.Minute)); err != nil {
				t.Fatalf("%v:\n%s", err, p.output())
			}
		}
	}
	runs := testutil.CheckSlots(t, log, 3, killed.Stop())
	t.Logf("%d runs in 3 slots", len(runs))
}
