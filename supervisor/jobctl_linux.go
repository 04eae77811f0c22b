package supervisor

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// stopForShell handles a job that stopped (^Z at the terminal it was
// handed). A shell waits for leasewrap, not for the job, so leasewrap
// takes the terminal back and stops itself: the shell sees its job stopped
// and gets its prompt back. On SIGCONT (fg, bg) leasewrap gives the job
// the terminal again and continues it. Without the terminal (no job
// control) a stopped job is left alone. While leasewrap is stopped it
// cannot renew: a stop longer than the fencing deadline ends in a lost
// lease on resume.
func (r *runner) stopForShell(ch *child) {
	if !r.foreground {
		return
	}
	stdin := r.cfg.Stdin
	setForeground(stdin, unix.Getpgrp())
	unix.Kill(os.Getpid(), unix.SIGSTOP)
	// Continued.
	if fg, err := unix.IoctlGetInt(int(stdin.Fd()), unix.TIOCGPGRP); err == nil && fg == unix.Getpgrp() {
		setForeground(stdin, ch.group.pgid) // fg: the job gets the terminal again
	}
	ch.group.signal(unix.SIGCONT)
}

// setForeground makes pgid the terminal's foreground group. SIGTTOU is
// blocked on the calling thread meanwhile, as a shell does: a background
// process may then change the foreground group (tcsetpgrp(3)). It is
// blocked, not ignored, so no child inherits an ignored SIGTTOU.
func setForeground(tty *os.File, pgid int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set, old unix.Sigset_t
	set.Val[0] = 1 << (uint(unix.SIGTTOU) - 1)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old); err != nil {
		return err
	}
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	return unix.IoctlSetPointerInt(int(tty.Fd()), unix.TIOCSPGRP, pgid)
}
