package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// TestLockSlotsCrowd: a crowd of lock wrappers with --slots 3 (waiters and
// try-once wrappers mixed, two SIGKILLed while their jobs run: the jobs
// die with them and their slots free at the TTL) never runs more than 3
// jobs at once, never two in one slot; lock holders --slots 3 shows each
// slot's holder while the first round's jobs are held at their end (a
// gate), so a slow machine cannot let the crowd finish before it looks.
func TestLockSlotsCrowd(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "history")
	gate := testutil.HoldGate(t, filepath.Join(dir, "gate"))
	job := testutil.GatedSlotJob(log, filepath.Join(dir, "gate"), 0.3)
	killed := testutil.WatchKilled(log)
	for round := range 2 {
		var ws []*wrapper
		for i := range 10 {
			ws = append(ws, startLW(t, nil, lockArgs("pool", c.Endpoints(), append(fast, "--slots", "3", "--wait", testutil.CrowdWait(i)), "sh", "-c", job)...))
		}
		testutil.WaitFor(t, "jobs to start", 30*time.Second, func() bool {
			b, _ := os.ReadFile(log)
			return strings.Count(string(b), "s ") >= 3*(round+1)
		})
		if round == 0 {
			// While the gate holds the first three jobs, holders shows a
			// holding key in each slot (asked again: a slot may be between
			// its acquisition and its job's start line; 1 with [] is
			// "nothing there" yet).
			var out string
			testutil.WaitFor(t, "lock holders --slots 3 to show a holder in each slot", 20*time.Second, func() bool {
				var code int
				code, out = runLW(t, nil, "lock", "holders", "pool", "--slots", "3", "--endpoints", c.Endpoints()[0])
				var hs []holderJSON
				if err := json.Unmarshal([]byte(out), &hs); err != nil || code != 0 && (code != 1 || len(hs) != 0) {
					t.Fatalf("lock holders --slots 3: want 0 and JSON, or 1 and [], have %d (%v):\n%s", code, err, out)
				}
				holding := map[int]bool{}
				for _, h := range hs {
					if h.Holds {
						holding[h.Slot] = true
					}
				}
				return len(holding) == 3
			})
			gate.Open()
		}
		for _, i := range testutil.CrowdKilled {
			ws[i].Cmd.Process.Signal(syscall.SIGKILL)
		}
		for i, w := range ws {
			if err := testutil.CheckCrowdCode(i, w.wait(t, 2*time.Minute)); err != nil {
				t.Fatalf("%v:\n%s", err, w.out.String())
			}
		}
	}
	runs := testutil.CheckSlots(t, log, 3, killed.Stop())
	t.Logf("%d runs in 3 slots", len(runs))
	for _, name := range []string{"pool/", "pool-1/", "pool-2/"} {
		testutil.WaitFor(t, "the keys of "+name+" gone", 30*time.Second, func() bool { return countKeys(t, cli, name) == 0 })
	}
}

// TestOnceRefusesSlots: a once record is one run per key: --slots 2 is
// usage (64), said why, before anything connects.
func TestOnceRefusesSlots(t *testing.T) {
	code, out := runLW(t, nil, "once", "run", "k", "--endpoints", "127.0.0.1:1", "--slots", "2", "--", "true")
	if code != 64 || !strings.Contains(out, "--slots 2: a once record is one run per key") {
		t.Fatalf("want 64 saying why, have %d:\n%s", code, out)
	}
}
