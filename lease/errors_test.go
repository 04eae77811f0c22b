package lease

import (
	"fmt"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/fswatch"
)

// The local kinds' wake-up source watches the holder a HeldError names.
var _ fswatch.Holder = (*HeldError)(nil)

// HolderAttrs names only what is known, in a fixed order, and never the
// identity (callers log that under their own key).
func TestHeldErrorHolderAttrs(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	for _, tc := range []struct {
		err  HeldError
		want string
	}{
		{HeldError{Holder: "a"}, "[]"},
		{HeldError{Holder: "a", PID: 7, Host: "h"}, "[holder_pid 7 holder_host h]"},
		{HeldError{Since: since}, "[held_since 2026-01-02T02:04:05Z held_for"},
	} {
		have := fmt.Sprint(tc.err.HolderAttrs())
		if len(have) < len(tc.want) || have[:len(tc.want)] != tc.want {
			t.Errorf("%+v: want %s…, have %s", tc.err, tc.want, have)
		}
	}
}
