// Package abandon waits for a call that may never return (stuck in the
// kernel on a dead file system) on a goroutine of its own, abandoned at a
// monotonic deadline. That goroutine is the one exception to "every
// goroutine is an actor": a stuck call must not hold a safety deadline.
package abandon

import (
	"context"
	"time"
)

// Clock is the time source of a wait: the part of client-go's clock.Clock
// it uses, so that tests can replace it. Readings are monotonic.
type Clock interface {
	Now() time.Time
	// After delivers once d has passed.
	After(d time.Duration) <-chan time.Time
}

// Real is the clock of a running process.
type Real struct{}

func (Real) Now() time.Time                         { return time.Now() }
func (Real) After(d time.Duration) <-chan time.Time { return time.After(d) }

// At calls fn on its own goroutine and waits for its error until the instant
// at (on c; zero: no limit) or ctx's end (ctx.Err()). abandoned reports that
// at passed first; a result arriving with the deadline still counts. The
// caller bounds fn with a context ending no later than at.
func At(ctx context.Context, c Clock, at time.Time, fn func() error) (abandoned bool, err error) {
	done := make(chan error, 1) // buffered: an abandoned call never blocks
	go func() { done <- fn() }()
	var atC <-chan time.Time // nil (never) without a deadline
	if !at.IsZero() {
		atC = c.After(at.Sub(c.Now()))
	}
	select {
	case err := <-done:
		return false, err
	case <-ctx.Done():
		return false, ctx.Err()
	case <-atC:
		select {
		case err := <-done:
			return false, err
		default:
			return true, nil
		}
	}
}
