package supervisor

import (
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/lease"
)

// reapPoll is a safety net for the reaper. SIGCHLD wakes it: coalesced
// signals are harmless because each wake reaps every exited child, and the
// buffered channel keeps a signal that arrives between the last wait4 and
// the next select. An idle wrapper should not wake every second for it.
const reapPoll = time.Minute

// reap waits for the child to exit and returns how it ended. As a
// subreaper (any) it reaps every other child that ends meanwhile too
// (orphans) without ever taking the main child's status for one of
// theirs: it waits for any pid and compares. Otherwise it waits for its
// own child only, so a program embedding the supervisor keeps its other
// children's statuses. stopped, if not nil, is called when the child
// stops (job control); done, if not nil, the moment the child is gone.
func reap(ch *child, chld <-chan os.Signal, any bool, stopped, done func()) lease.Result {
	t := time.NewTicker(reapPoll)
	defer t.Stop()
	wpid := ch.pid
	if any {
		wpid = -1
	}
	for {
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(wpid, &ws, unix.WNOHANG|unix.WUNTRACED, nil)
			if err == unix.EINTR {
				continue
			}
			if pid <= 0 || err != nil {
				break
			}
			if pid != ch.pid {
				continue
			}
			if ws.Stopped() {
				if stopped != nil {
					stopped()
				}
				continue
			}
			if ws.Exited() || ws.Signaled() {
				if done != nil {
					done()
				}
				ch.cmd.Process.Release()
				return resultOf(ws)
			}
		}
		select {
		case <-chld:
		case <-t.C:
		}
	}
}

// exited reports, without reaping it, whether the child has ended.
func (ch *child) exited() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, ch.pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if err == unix.ECHILD {
		return true // already reaped
	}
	if err != nil {
		return false
	}
	// Linux fills si_signo with SIGCHLD for a waitable child, 0 otherwise.
	return info.Signo != 0
}

// resultOf turns a wait status into the exit-code contract: the child's
// code, or 128+N for death by signal N.
func resultOf(ws unix.WaitStatus) lease.Result {
	if ws.Signaled() {
		return lease.Result{ExitCode: 128 + int(ws.Signal()), Signal: ws.Signal()}
	}
	return lease.Result{ExitCode: ws.ExitStatus()}
}

// reapOrphans collects whatever orphans are already gone, before exit.
func reapOrphans() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if err == unix.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
