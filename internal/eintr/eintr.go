// Package eintr retries system calls a signal interrupted, as the standard
// library's private os.ignoringEINTR does. Despite SA_RESTART, wait4, waitid,
// poll, flock and pipe reads can still return EINTR, which is never an answer.
package eintr

import (
	"errors"
	"syscall"
)

// Retry calls fn until it returns something other than EINTR. fn must be
// safe to call again, recomputing any timeout inside it.
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
