package eintr

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
)

func TestRetryStopsAtTheFirstOtherAnswer(t *testing.T) {
	for _, final := range []error{nil, syscall.EBADF, fmt.Errorf("wrapped: %w", syscall.ENOENT)} {
		calls := 0
		err := Retry(func() error {
			if calls++; calls < 3 {
				return fmt.Errorf("read: %w", syscall.EINTR)
			}
			return final
		})
		if calls != 3 || !errors.Is(err, final) || (final == nil) != (err == nil) {
			t.Errorf("final %v: want 3 calls and %v, have %d calls and %v", final, final, calls, err)
		}
	}
	calls := 0
	n, err := Retry2(func() (int, error) {
		if calls++; calls == 1 {
			return -1, syscall.EINTR
		}
		return 42, nil
	})
	if n != 42 || err != nil || calls != 2 {
		t.Errorf("Retry2: want 42, nil after 2 calls, have %d, %v after %d", n, err, calls)
	}
}
