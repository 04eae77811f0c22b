package supervisor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/procstat"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// ^Z at the terminal stops the job; leasewrap then takes the terminal back
// and stops itself, as a shell expects of its job. SIGCONT (fg) hands the
// terminal to the job again and continues it, and the job finishes.
func TestJobControlStopAndContinueUnderATerminal(t *testing.T) {
	dir := t.TempDir()
	master, slave := testutil.OpenPTY(t)
	ready := filepath.Join(dir, "ready")
	// One long sleep, not a loop of short ones: a ^Z that lands while the
	// shell is between vfork and exec stops the vfork child while the
	// shell waits for it uninterruptibly (state D), so the job can never
	// stop as a whole (seen in CI). The ^Z below waits for the sleep to run.
	script := "touch " + ready + "; sleep 4; echo finished > " + filepath.Join(dir, "out")
	cmd := exec.Command(os.Args[0], "sh", "-c", script)
	cmd.Env = testEnv(dir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { unix.Kill(pid, unix.SIGKILL); unix.Kill(pid, unix.SIGCONT) })
	go func() { // drain the terminal so writes never block
		b := make([]byte, 4096)
		for {
			if _, err := master.Read(b); err != nil {
				return
			}
		}
	}()
	waitFile(t, ready)
	fg := func() int { p, _ := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPGRP); return p }
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(groupStates(fg()), "(sleep):S"); {
		if time.Now().After(deadline) {
			t.Fatalf("the job's sleep is not running 10s after it started: %s", groupStates(fg()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if p := fg(); p == pid || p <= 0 {
		t.Fatalf("want the job in the foreground, have group %d (leasewrap %d)", p, pid)
	}
	waited := make(chan unix.WaitStatus, 1)
	waitOnce := func() {
		var ws unix.WaitStatus
		for {
			if _, err := unix.Wait4(pid, &ws, unix.WUNTRACED, nil); err != unix.EINTR {
				break
			}
		}
		waited <- ws
	}
	go waitOnce()
	// ^Z, typed again every 2 s while nothing stops (a keystroke the line
	// discipline took before the job's group was ready must not fail the
	// test); the bound is 10 s.
	stopped := false
	for try := 0; try < 5 && !stopped; try++ {
		master.Write([]byte{0x1a})
		select {
		case ws := <-waited:
			if !ws.Stopped() {
				t.Fatalf("want leasewrap stopped after ^Z, have status %#x", uint32(ws))
			}
			stopped = true
		case <-time.After(2 * time.Second):
			t.Logf("no stop 2s after ^Z #%d; foreground group %d; job: %s", try+1, fg(), groupStates(fg()))
		}
	}
	if !stopped {
		t.Fatal("leasewrap did not stop within 10s of ^Z: the shell would hang")
	}
	if p := fg(); p != pid {
		t.Fatalf("want the terminal back with leasewrap's group %d, have %d", pid, p)
	}
	unix.Kill(pid, unix.SIGCONT) // fg: the shell hands the terminal back to its job, leasewrap's group
	go waitOnce()
	select {
	case ws := <-waited:
		if !ws.Exited() || ws.ExitStatus() != 0 {
			t.Fatalf("want exit 0 after fg, have status %#x", uint32(ws))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("leasewrap did not finish within 20s of SIGCONT")
	}
	if got := readFile(t, filepath.Join(dir, "out")); got != "finished\n" {
		t.Fatalf("want the job to finish, have %q", got)
	}
}

// groupStates describes the processes of group pgid (pid:state), for a
// failure message.
func groupStates(pgid int) string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		if st, err := procstat.Read(pid); err == nil && st.PGRP == pgid {
			out = append(out, fmt.Sprintf("%d(%s):%c", pid, st.Comm, st.State))
		}
	}
	return strings.Join(out, " ")
}
