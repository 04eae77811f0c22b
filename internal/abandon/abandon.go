// Package abandon holds the one way leasewrap waits for a call that may
// never return (a renewal or a settle stuck in the kernel on a dead file
// system): the call runs on a goroutine of its own and is abandoned, left
// to return on its own, at a deadline on the monotonic clock.
//
// That goroutine is the one exception to "every goroutine is an actor":
// it may outlive its caller by design, because a call stuck in the kernel
// cannot be interrupted and must not hold a safety deadline.
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

// At calls fn on a goroutine of its own and waits for its error until
// the instant at (on c; the zero Time waits without limit) or until ctx
// ends. It returns fn's error; ctx.Err() when ctx ended first (the caller
// is shutting down: nothing to wait for); or abandoned when at passed
// first, fn then being left to return on its own. A result that arrives
// together with the deadline still counts. fn gets no context of its
// own: the caller bounds it with one that ends no later than at.
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
