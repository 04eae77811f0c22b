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

// reap waits for the child to exit and returns how it ended. It reaps every
// other child that ends meanwhile too (orphans, when leasewrap is PID 1 or
// a subreaper) without ever taking the main child's status for one of
// theirs: it waits for any pid and compares. done, if not nil, is called
// the moment the child is known to be gone.
func reap(ch *child, chld <-chan os.Signal, done func()) lease.Result {
	t := time.NewTicker(reapPoll)
	defer t.Stop()
	for {
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if err == unix.EINTR {
				continue
			}
			if pid <= 0 || err != nil {
				break
			}
			if pid == ch.pid && (ws.Exited() || ws.Signaled()) {
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
