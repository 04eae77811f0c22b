package testutil

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/procstat"
)

// SlotJob is a shell job for --slots crowds: it appends "s SLOT NS PID"
// to log when it starts and "e SLOT NS PID" when it ends after secs (NS:
// the wall clock in nanoseconds, date +%s%N). Short appends to one file
// are atomic.
func SlotJob(log string, secs float64) string {
	return fmt.Sprintf(`echo "s $LEASEWRAP_SLOT $(date +%%s%%N) $$" >> %s; sleep %g; echo "e $LEASEWRAP_SLOT $(date +%%s%%N) $$" >> %s`, log, secs, log)
}

// GatedSlotJob is SlotJob whose jobs, after secs, also wait for gate to
// open (a shared flock(1) on the file gate, which HoldGate holds
// exclusively) before they end: a test can look at the slots while it
// knows they are held, however slow the machine.
func GatedSlotJob(log, gate string, secs float64) string {
	return fmt.Sprintf(`echo "s $LEASEWRAP_SLOT $(date +%%s%%N) $$" >> %s; sleep %g; flock -s %s true; echo "e $LEASEWRAP_SLOT $(date +%%s%%N) $$" >> %s`, log, secs, gate, log)
}

// Gate is a file whose exclusive flock the test holds: GatedSlotJob's
// jobs wait for its release.
type Gate struct{ f *os.File }

// HoldGate creates the file path and holds its flock until Open or the
// end of the test.
func HoldGate(t testing.TB, path string) *Gate {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("flock %s: %v", path, err)
	}
	g := &Gate{f: f}
	t.Cleanup(g.Open)
	return g
}

// Open lets the held jobs end, and later ones pass at once.
func (g *Gate) Open() { g.f.Close() }

// SlotRun is one job of a slot history: its slot and when it ran.
type SlotRun struct {
	Slot       int
	PID        int
	Start, End int64 // wall clock, ns
}

// CheckSlots reads the history SlotJob wrote to log and fails t if more
// than n jobs ran at once, if two jobs ran at once in one slot, or if a
// slot is outside [0, n). A job killed before its end line counts as
// running until killed[pid] (when the test saw it gone); without that it
// fails t. It returns the runs.
func CheckSlots(t testing.TB, log string, n int, killed map[int]int64) []SlotRun {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[int]*SlotRun{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("slot history: bad line %q", line)
		}
		slot, err1 := strconv.Atoi(f[1])
		ns, err2 := strconv.ParseInt(f[2], 10, 64)
		pid, err3 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("slot history: bad line %q", line)
		}
		r := runs[pid]
		if r == nil {
			r = &SlotRun{Slot: slot, PID: pid}
			runs[pid] = r
		}
		if f[0] == "s" {
			r.Start = ns
		} else {
			r.End = ns
		}
	}
	var out []SlotRun
	for pid, r := range runs {
		if r.End == 0 {
			end, ok := killed[pid]
			if !ok {
				t.Fatalf("slot history: job %d (slot %d) has no end and was not killed", pid, r.Slot)
			}
			r.End = end
		}
		if r.Start == 0 || r.Slot < 0 || r.Slot >= n {
			t.Fatalf("slot history: job %d: slot %d of %d, start %d", pid, r.Slot, n, r.Start)
		}
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	for i, a := range out {
		at := 1
		for _, b := range out[:i] {
			if b.End > a.Start { // b still ran when a started
				at++
				if b.Slot == a.Slot {
					t.Errorf("slot %d held twice at once: job %d [%d, %d] and job %d [%d, %d]", a.Slot, b.PID, b.Start, b.End, a.PID, a.Start, a.End)
				}
			}
		}
		if at > n {
			t.Errorf("%d jobs ran at once (at most %d allowed) when job %d started in slot %d", at, n, a.PID, a.Slot)
		}
	}
	return out
}

// KilledJobs watches the jobs of a SlotJob history that started and have
// not ended, every 5 ms until Stop: a job seen gone without its end line
// was killed, and the moment it was seen gone is its end for CheckSlots
// (no earlier than its real end; a slot's lease outlives it by far).
type KilledJobs struct {
	stop   chan struct{} // closed by Stop
	giveUp chan struct{} // closed when Stop stops waiting
	done   chan struct{}
	seen   map[int]int64
}

// WatchKilled starts watching log's jobs.
func WatchKilled(log string) *KilledJobs {
	k := &KilledJobs{stop: make(chan struct{}), giveUp: make(chan struct{}), done: make(chan struct{}), seen: map[int]int64{}}
	go func() {
		defer close(k.done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		stop := k.stop
		for {
			if open := k.look(log); open == 0 && stop == nil {
				return
			}
			select {
			case <-stop:
				stop = nil // from now on, return once no job is open
			case <-k.giveUp:
				return
			case <-t.C:
			}
		}
	}()
	return k
}

// look notes the jobs of log seen gone without their end line, and
// returns how many jobs are still open: started, not ended, not seen gone.
func (k *KilledJobs) look(log string) int {
	b, _ := os.ReadFile(log)
	running := map[int]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			continue
		}
		pid, _ := strconv.Atoi(f[3])
		running[pid] = f[0] == "s"
	}
	now := time.Now().UnixNano()
	open := 0
	for pid, r := range running {
		if _, ok := k.seen[pid]; !r || ok {
			continue
		}
		if procstat.Running(pid) {
			open++
		} else {
			k.seen[pid] = now
		}
	}
	return open
}

// Stop waits until every job that started has ended or was seen gone (at
// most 30 s, stretched by Scale; CheckSlots then names a job still
// running), ends the watch and returns when each killed job was seen gone.
func (k *KilledJobs) Stop() map[int]int64 {
	close(k.stop)
	select {
	case <-k.done:
	case <-time.After(Scale(30 * time.Second)):
		close(k.giveUp)
		<-k.done
	}
	return k.seen
}

// CrowdWait is the --wait of wrapper i of a slot crowd: the even ones
// wait (long, bounded), the odd ones try once.
func CrowdWait(i int) string {
	if i%2 == 0 {
		return "90s"
	}
	return "0s"
}

// CrowdKilled are the wrappers of a slot crowd that the test SIGKILLs
// while their jobs run.
var CrowdKilled = []int{0, 4}

// CheckCrowdCode is nil when wrapper i of a slot crowd exited as it may:
// anything when it was SIGKILLed, 0 when it waited, 0 or 75 (every slot
// held) when it tried once.
func CheckCrowdCode(i, code int) error {
	switch {
	case slices.Contains(CrowdKilled, i):
	case CrowdWait(i) != "0s" && code != 0:
		return fmt.Errorf("waiter %d: want 0, have %d", i, code)
	case CrowdWait(i) == "0s" && code != 0 && code != 75:
		return fmt.Errorf("try-once %d: want 0 or 75, have %d", i, code)
	}
	return nil
}

// OnExitProbe is an on-exit hook that writes "OUTCOME EXIT_CODE alive|dead"
// to out, dead when the job whose pid is in pidFile has ended: a hook must
// never run while a lost lease's job is still alive.
func OnExitProbe(pidFile, out string) string {
	return fmt.Sprintf(`if kill -0 $(cat %s) 2>/dev/null; then j=alive; else j=dead; fi; echo "$LEASEWRAP_OUTCOME $LEASEWRAP_EXIT_CODE $j" > %s`, pidFile, out)
}
