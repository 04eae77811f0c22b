// Package eintr retries system calls that a signal interrupted, the one
// copy of the loop the standard library keeps private (os.ignoringEINTR):
// golang.org/x/sys/unix returns EINTR to its caller and has no helper.
//
// Go installs its signal handlers with SA_RESTART, so most calls restart
// by themselves; wait4, waitid, poll, flock on some file systems and reads
// of pipes and terminals can still return EINTR (a SIGCHLD, SIGURG of the
// runtime's preemption, a forwarded signal), which is never an answer.
package eintr

import (
	"errors"
	"syscall"
)

// Retry calls fn until it returns an error other than EINTR (or nil), and
// returns that. fn must be safe to call again: recompute anything that
// depends on time (a poll timeout) inside it.
func Retry(fn func() error) error {
	for {
		if err := fn(); !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// Retry2 is Retry for a call that also returns a value (a count, a pid).
func Retry2[T any](fn func() (T, error)) (T, error) {
	for {
		v, err := fn()
		if !errors.Is(err, syscall.EINTR) {
			return v, err
		}
	}
}
