// Command gorun is the run-verb floor of `make bench`: a static Go program
// that only starts its arguments (an absolute path and its arguments) as a
// child and waits for it, as a Go wrapper that held no lease at all would.
// It starts the child the way the supervisor does (syscall.StartProcess,
// not os/exec, whose first start probes pidfd support with a throwaway
// child: 41 system calls and a clone more).
package main

import (
	"os"
	"syscall"
)

func main() {
	pid, _, err := syscall.StartProcess(os.Args[1], os.Args[1:], &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}})
	if err != nil {
		os.Exit(1)
	}
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	if !ws.Exited() || ws.ExitStatus() != 0 {
		os.Exit(1)
	}
}
