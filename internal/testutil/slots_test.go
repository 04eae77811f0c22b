package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckSlotsCatches: the checker sees too many jobs at once and two
// in one slot.
func TestCheckSlotsCatches(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		bad       bool
	}{
		{"fine", "s 0 10 1\ns 1 11 2\ne 0 20 1\ns 0 21 3\ne 1 30 2\ne 0 40 3\n", false},
		{"same slot", "s 0 10 1\ns 0 11 2\ne 0 20 1\ne 1 30 2\n", true},
		{"too many", "s 0 10 1\ns 1 11 2\ns 1 12 3\ne 0 20 1\ne 1 30 2\ne 1 30 3\n", true},
		{"killed", "s 0 10 1\ns 0 31 2\ne 0 40 2\n", false},
	} {
		log := filepath.Join(t.TempDir(), "h")
		os.WriteFile(log, []byte(tc.log), 0o644)
		rec := &recorder{TB: t}
		CheckSlots(rec, log, 2, map[int]int64{1: 30})
		if rec.failed != tc.bad {
			t.Errorf("%s: want failed %v, have %v", tc.name, tc.bad, rec.failed)
		}
	}
}

type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Helper()               {}

// A GatedSlotJob ends only after its gate opens, and one started after
// passes at once.
func TestGatedSlotJobWaitsForItsGate(t *testing.T) {
	dir := t.TempDir()
	log, gatePath := filepath.Join(dir, "h"), filepath.Join(dir, "gate")
	gate := HoldGate(t, gatePath)
	job := func() *Proc {
		cmd := exec.Command("sh", "-c", GatedSlotJob(log, gatePath, 0))
		cmd.Env = append(os.Environ(), "LEASEWRAP_SLOT=0")
		return Start(t, cmd)
	}
	held := job()
	WaitFor(t, "the job's start line", 10*time.Second, func() bool { b, _ := os.ReadFile(log); return strings.Contains(string(b), "s 0 ") })
	opened := time.Now().UnixNano()
	gate.Open()
	held.WaitOK(t, 10*time.Second)
	job().WaitOK(t, 10*time.Second)
	runs := CheckSlots(t, log, 2, nil)
	if len(runs) != 2 || runs[0].End < opened {
		t.Fatalf("want the held job to end after the gate opened (%d), have %+v", opened, runs)
	}
}
