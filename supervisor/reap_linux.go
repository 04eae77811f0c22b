package supervisor

import (
	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/eintr"

	"github.com/leasewrap/leasewrap/lease"
)

// reap collects, without blocking, whatever of the child's state changed:
// its end (exited, with its status) or a stop (job control). As a
// subreaper (anyChild) it reaps every other child that ended meanwhile
// too (orphans) without ever taking the main child's status for one of
// theirs: it waits for any pid and compares. Otherwise it waits for its
// own child only, so a program embedding the supervisor keeps its other
// children's statuses.
func (ch *child) reap(anyChild bool) (status lease.Result, exited, stopped bool) {
	wpid := ch.pid
	if anyChild {
		wpid = -1
	}
	for {
		var ws unix.WaitStatus
		pid, err := eintr.Retry2(func() (int, error) { return unix.Wait4(wpid, &ws, unix.WNOHANG|unix.WUNTRACED, nil) })
		if pid <= 0 || err != nil {
			return status, false, stopped
		}
		if pid != ch.pid {
			continue
		}
		if ws.Stopped() {
			stopped = true
			continue
		}
		if ws.Exited() || ws.Signaled() {
			return resultOf(ws), true, stopped
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
		pid, err := eintr.Retry2(func() (int, error) { return unix.Wait4(-1, &ws, unix.WNOHANG, nil) })
		if pid <= 0 || err != nil {
			return
		}
	}
}
