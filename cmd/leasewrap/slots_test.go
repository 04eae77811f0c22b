package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// TestFlockSlotsCrowd: a crowd of wrappers with --slots 3 on one PATH
// (waiters and try-once wrappers mixed, flock(1) on PATH as slot 0's
// rival, a few wrappers SIGKILLed while their job runs: the job keeps its
// slot's descriptor and runs on) never runs more than 3 jobs at once,
// never two in one slot, and uses every slot.
func TestFlockSlotsCrowd(t *testing.T) {
	dir := t.TempDir()
	lock, log := filepath.Join(dir, "pool.lock"), filepath.Join(dir, "history")
	job := testutil.SlotJob(log, 0.2)
	flock1, _ := exec.LookPath("flock")
	for round := range 2 {
		var ps []*proc
		for i := range 10 {
			ps = append(ps, startLW(t, nil, "flock", "run", lock, "--slots", "3", "--wait", testutil.CrowdWait(i), "--", "sh", "-c", job))
		}
		var f1 *exec.Cmd
		if flock1 != "" {
			f1 = exec.Command(flock1, "-w", "30", lock, "env", "LEASEWRAP_SLOT=0", "sh", "-c", job)
			if err := f1.Start(); err != nil {
				t.Fatal(err)
			}
		}
		// SIGKILL two wrappers once jobs run: their jobs hold on.
		waitFor(t, "jobs to start", func() bool { b, _ := os.ReadFile(log); return strings.Count(string(b), "s ") >= 3*(round+1) })
		for _, i := range testutil.CrowdKilled {
			ps[i].Cmd.Process.Signal(syscall.SIGKILL)
		}
		for i, p := range ps {
			if err := testutil.CheckCrowdCode(i, p.wait(t)); err != nil {
				t.Fatalf("%v\n%s", err, &p.stderr)
			}
		}
		if f1 != nil {
			if err := f1.Wait(); err != nil {
				t.Fatalf("flock(1): %v", err)
			}
		}
	}
	// The SIGKILLed wrappers' jobs end on their own.
	testutil.WaitFor(t, "every job's end", 30e9, func() bool {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "s ") == strings.Count(string(b), "e ")
	})
	runs := testutil.CheckSlots(t, log, 3, nil)
	used := map[int]bool{}
	for _, r := range runs {
		used[r.Slot] = true
	}
	if len(used) != 3 {
		t.Fatalf("want every slot used, have %v in %d runs", used, len(runs))
	}
	t.Logf("%d runs in 3 slots", len(runs))
}

// TestSlotsRefusedByOneHolderKinds: claim, reserve and session define
// one holder per key: --slots other than 1 is usage (64), said why.
func TestSlotsRefusedByOneHolderKinds(t *testing.T) {
	root, env := claimEnv(t)
	sroot := sessionRoot(t)
	for _, args := range [][]string{
		{"claim", "run", "job", "--root", root},
		{"reserve", "run", "job"},
		{"session", "run", testSID, "--root", sroot, "--epoch", "6"},
		{"session", "maintain", testSID, "--root", sroot},
	} {
		code, p := runLW(t, env, append(args, "--slots", "2", "--", "true")...)
		if code != 64 || !strings.Contains(p.stderr.String(), "--slots 2: ") {
			t.Fatalf("%v --slots 2: want 64 saying why, have %d\n%s", args, code, &p.stderr)
		}
	}
	if code, p := runLW(t, nil, "flock", "run", filepath.Join(root, "x.lock"), "--slots", "0", "--", "true"); code != 64 {
		t.Fatalf("--slots 0: want 64, have %d\n%s", code, &p.stderr)
	}
}
