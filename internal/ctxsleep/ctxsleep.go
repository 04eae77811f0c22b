// Package ctxsleep holds the one context-aware sleep of leasewrap's
// retry and poll loops.
package ctxsleep

import (
	"context"
	"time"
)

// Sleep waits d or until ctx ends and returns ctx.Err() if it ended (nil
// when d passed); d <= 0 only reports whether ctx has ended.
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
