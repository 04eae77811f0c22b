package cli

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"testing"
)

// TestDefaultHolder checks the holder's shape, that two invocations in one
// process get different suffixes, and that a kernel without random bytes
// still yields a holder (the clock's nanoseconds) instead of a failure.
func TestDefaultHolder(t *testing.T) {
	shape := regexp.MustCompile(fmt.Sprintf(`^leasewrap:[^:]+:%d:[0-9a-f]{8}$`, os.Getpid()))
	a, b := DefaultHolder(), DefaultHolder()
	for _, h := range []string{a, b} {
		if !shape.MatchString(h) {
			t.Errorf("want leasewrap:HOST:PID:8 hex digits, have %q", h)
		}
	}
	if a == b {
		t.Errorf("two holders of one process are equal: %q", a)
	}
	failing := func([]byte) (int, error) { return 0, errors.New("no entropy") }
	c := defaultHolder(failing)
	if !shape.MatchString(c) {
		t.Errorf("without random bytes: want the same shape, have %q", c)
	}
	if c[len(c)-8:] == "00000000" {
		t.Errorf("without random bytes: want the clock in the suffix, have %q", c)
	}
}
