package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/inherit"
	"github.com/leasewrap/leasewrap/internal/eintr"
	"github.com/leasewrap/leasewrap/lease"
)

// child is a started child process: start (startPlain, startGuarded, or
// startStopped then letGoUnder), signal, kill (never run), reap.
type child struct {
	pid     int
	form    *jobForm // the job: everything the child started
	gate    *os.File // our end of the exec gate's socket while it waits
	takeTTY bool     // it gets the terminal when let go
	pidOnly bool     // the lease's liveness is this pid alone: leftovers die at once
	guard   *guard   // keeps the job from outliving leasewrap, or nil
}

// signal forwards s to the job.
func (ch *child) signal(s os.Signal) error {
	sig, ok := s.(syscall.Signal)
	if !ok {
		return fmt.Errorf("supervisor: cannot forward %v", s)
	}
	return ch.form.forward(sig)
}

// reap collects, without blocking, the child's end or a stop (anyChild: orphans too).
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

// resultOf is the child's code, or 128+N for death by signal N.
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

// startError classifies a failed exec of path with env(1)'s codes.
func startError(path string, err error) error {
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR):
		return &ExecError{Path: path, Code: CodeNotFound, Err: err}
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM), errors.Is(err, unix.EISDIR),
		errors.Is(err, unix.ENOEXEC), errors.Is(err, unix.ETXTBSY):
		return &ExecError{Path: path, Code: CodeNotExecutable, Err: err}
	}
	return fmt.Errorf("%w %s: %w", ErrStart, path, err)
}

// prepare builds the command with the lease handed over, in a process
// group of its own and, when leasewrap owns the terminal, its foreground.
func (r *runner) prepare(j *job, h inherit.Handover) (*exec.Cmd, error) {
	if err := startLimits(); err != nil {
		return nil, err
	}
	c := &r.cfg
	cmd := &exec.Cmd{Path: j.path, Args: j.argv, Dir: c.Dir, Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr}
	inherit.Attach(cmd, c.Env, h)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Foreground: r.foreground, Ctty: 0}
	if j.form != nil {
		j.form.into(cmd)
	}
	return cmd, nil
}

// spawn starts cmd and returns its pid; children are reaped by pid.
func spawn(cmd *exec.Cmd) (int, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	cmd.Process.Release()
	return pid, nil
}

// spawnJob is spawn for a job's command, its oom_score_adj above leasewrap's.
func spawnJob(cmd *exec.Cmd) (int, error) {
	pid, err := spawn(cmd)
	if err == nil {
		oom.started(pid)
	}
	return pid, err
}

// foregroundTTY reports whether f is a terminal whose foreground group is ours.
func foregroundTTY(f *os.File) bool {
	pg, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP)
	return err == nil && pg == unix.Getpgrp()
}

// startPlain starts cmd running at once, under a lease already taken.
func startPlain(cmd *exec.Cmd) (*child, error) {
	pid, err := spawnJob(cmd)
	if err != nil {
		return nil, startError(cmd.Path, err)
	}
	return &child{pid: pid, form: pgroupForm(pid)}, nil
}

// startStopped starts the command behind the exec gate; it gets the
// terminal only when let go, so a ^C meanwhile reaches leasewrap.
func (r *runner) startStopped(j *job, h inherit.Handover) (*child, error) {
	cmd, err := r.prepare(j, h)
	if err != nil {
		return nil, err
	}
	tty := cmd.SysProcAttr.Foreground
	cmd.SysProcAttr.Foreground = false
	exe, err := r.helperExe("exec gate")
	if err != nil {
		return nil, err
	}
	ch, err := startGated(cmd, exe)
	if err != nil {
		return nil, err
	}
	ch.takeTTY = tty
	if j.form != nil {
		j.form.started(ch)
	}
	return ch, nil
}

// letGoUnder lets the gated ch run under ls after readyToStart, and returns
// the instant the fence counts from; on an error ch is killed and ls
// settled as never run.
func (r *runner) letGoUnder(ctx context.Context, j *job, ls lease.Lease, ch *child, at time.Time) (time.Time, error) {
	if !ch.awaitGate() { // it ended before the command could run
		err := fmt.Errorf("%w: the exec gate (leasewrap re-executed, pid %d) exited before it was ready; is a pids limit too tight for a Go program's start-up?", ErrStart, ch.pid)
		if sig := ch.kill(); sig != 0 {
			err = &abortError{sig: sig}
		}
		r.undo(j, ls, err)
		return at, err
	}
	at, err := r.readyToStart(ctx, j, ls, at)
	if err == nil && ch.takeTTY {
		ch.takeTTY = false
		if ferr := setForeground(r.cfg.Stdin, ch.form.pgid); ferr != nil {
			r.cfg.Logger.Debug("could not hand the terminal to the job", "err", ferr)
		}
	}
	if err == nil {
		err = ch.release()
	}
	if err != nil {
		ch.kill()
		r.undo(j, ls, err)
	}
	return at, err
}
