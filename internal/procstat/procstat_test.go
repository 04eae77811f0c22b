package procstat_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/procstat"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

func TestStartTimeOfAFreshChild(t *testing.T) {
	before := time.Now()
	cmd := testutil.Sleeper(t)
	ms, err := procstat.StartMillis(cmd.Pid())
	if err != nil {
		t.Fatal(err)
	}
	// btime has 1 s resolution and starttime 10 ms: allow 2 s either way.
	if d := time.UnixMilli(ms).Sub(before); d < -2*time.Second || d > 2*time.Second {
		t.Errorf("want a start time near %v, have %v (off by %v)", before, time.UnixMilli(ms), d)
	}
	secs, err := procstat.StartSecs(cmd.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if uint64(ms/1000) != secs {
		t.Errorf("want StartSecs %d = StartMillis/1000, have %d", ms/1000, secs)
	}
	st, err := procstat.Read(cmd.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if st.PPID != os.Getpid() {
		t.Errorf("want ppid %d, have %d", os.Getpid(), st.PPID)
	}
	if !procstat.Running(cmd.Pid()) {
		t.Error("want the sleeping child running")
	}
}

func TestZombieAndMissingProcessesAreNotRunning(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for procstat.Running(pid) { // exits at once; a zombie until we wait
		if time.Now().After(deadline) {
			t.Fatal("child still running after 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	if st, err := procstat.Read(pid); err != nil || st.State != 'Z' {
		t.Errorf("want a zombie before wait, have %+v, %v", st, err)
	}
	cmd.Wait()
	if procstat.Running(pid) {
		t.Error("want a reaped child not running")
	}
	for _, pid := range []int{0, -1, 0x7ffffffe} {
		if _, err := procstat.StartMillis(pid); err == nil {
			t.Errorf("pid %d: want an error", pid)
		}
	}
}
