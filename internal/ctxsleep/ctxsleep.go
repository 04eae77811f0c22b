// Package ctxsleep holds the one context-aware sleep of leasewrap's
// retry and poll loops.
package ctxsleep

import (
	"context"
	"time"
)

// Sleep waits d or until ctx ends, whichever comes first, and returns
// ctx.Err() when ctx ended (nil when d passed). A d of zero or less does
// not wait: it only reports whether ctx has ended. When both happen at
// once, ctx wins only if it ended before the timer fired.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
