package cli

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ParseStopSignal reads a --stop-signal value: a name with or without SIG
// in any case, or 1 to 64; "" is SIGTERM. SIGKILL and SIGSTOP are refused:
// a job cannot handle them.
func ParseStopSignal(s string) (syscall.Signal, error) {
	if s == "" {
		return syscall.SIGTERM, nil
	}
	var sig syscall.Signal
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > 64 {
			return 0, fmt.Errorf("%w: --stop-signal %d is not a signal number (1..64)", ErrUsage, n)
		}
		sig = syscall.Signal(n)
	} else {
		name := strings.ToUpper(s)
		if !strings.HasPrefix(name, "SIG") {
			name = "SIG" + name
		}
		if sig = unix.SignalNum(name); sig == 0 {
			return 0, fmt.Errorf("%w: --stop-signal %q is not a signal name (TERM, QUIT, INT, HUP, USR1, ... or a number)", ErrUsage, s)
		}
	}
	if sig == syscall.SIGKILL || sig == syscall.SIGSTOP {
		return 0, fmt.Errorf("%w: --stop-signal %s cannot be handled by the job; SIGKILL follows the stop signal after --kill-grace anyway", ErrUsage, unix.SignalName(sig))
	}
	return sig, nil
}
