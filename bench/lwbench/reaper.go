package main

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/eintr"
)

// reapFlag as os.Args[1] makes lwbench a child subreaper that runs the
// rest of its arguments in a new process group and reaps every process
// orphaned below it until none is left. Holders are started under it so
// that a SIGKILLed holder's child is reaped at once, as init would on a
// real system (the sandbox's pid 1 may not reap; a zombie child would keep
// a pid-liveness claim live forever).
const reapFlag = "-reap"

func reapMain(argv []string) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fatal(err)
	}
	c := exec.Command(argv[0], argv[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		fatal(err)
	}
	code := 0
	for {
		var ws syscall.WaitStatus
		pid, err := eintr.Retry2(func() (int, error) { return syscall.Wait4(-1, &ws, 0, nil) })
		if err != nil { // ECHILD: all gone
			os.Exit(code)
		}
		if pid == c.Process.Pid {
			code = ws.ExitStatus()
			if ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
		}
	}
}

// reaped wraps c to run under the reaper (see reapMain).
func reaped(c *exec.Cmd) *exec.Cmd {
	self, err := os.Executable()
	if err != nil {
		fatal(err)
	}
	r := exec.Command(self, append([]string{reapFlag, c.Path}, c.Args[1:]...)...)
	r.Env = c.Env
	return r
}
