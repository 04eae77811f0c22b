package renew

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/leasewrap/leasewrap/internal/abandon"
	"github.com/leasewrap/leasewrap/internal/ctxsleep"
)

// ErrFenced reports that no renewal succeeded before the fencing deadline.
var ErrFenced = errors.New("renew: no successful renewal before the fencing deadline")

// Config describes how to keep one lease alive.
type Config struct {
	// Renew extends the lease (or, with TTL 0, checks it is still ours).
	Renew func(ctx context.Context) error
	// Permanent reports whether a Renew error means the lease is gone for good.
	Permanent func(error) bool

	// TTL of the lease; 0 means it does not expire and Renew only checks.
	TTL time.Duration
	// Period between renewals; 0 means TTL/3 (or 5 s when TTL is 0).
	Period time.Duration
	// Jitter is the random fraction by which each wait is shortened: 0 none,
	// negative DefaultJitter.
	Jitter float64
	// Grace is the time the caller needs to stop its work; fencing happens
	// Grace+Margin before expiry.
	Grace time.Duration
	// Margin is the extra safety before expiry; 0 means max(1s, TTL/20).
	Margin time.Duration
	// Timeout bounds one Renew call; 0 means min(Period, 10s).
	Timeout time.Duration

	Logger *slog.Logger

	// OnRenew, if set, is called after each attempt with its monotonic start,
	// duration and error (nil: renewed; ErrFenced: abandoned). It must not block.
	OnRenew func(started time.Time, took time.Duration, err error)

	clock clock // nil: the real clock; tests replace it
}

// DefaultJitter is the Jitter a negative Config.Jitter stands for.
const DefaultJitter = 0.1

// clock is the keeper's monotonic time source (client-go's clock subset), faked
// in tests.
type clock interface {
	abandon.Clock
	// Sleep waits d or until ctx ends, returning ctx.Err() then.
	Sleep(ctx context.Context, d time.Duration) error
}

// realClock is the clock of a running keeper.
type realClock struct{ abandon.Real }

func (realClock) Sleep(ctx context.Context, d time.Duration) error { return ctxsleep.Sleep(ctx, d) }

// checkPeriod is how often a lease without a TTL is checked by default.
const checkPeriod = 5 * time.Second

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.Period == 0 {
		c.Period = checkPeriod
		if c.TTL > 0 {
			c.Period = c.TTL / 3
		}
	}
	if c.Jitter < 0 {
		c.Jitter = DefaultJitter
	}
	if c.Margin == 0 && c.TTL > 0 {
		c.Margin = max(time.Second, c.TTL/20)
	}
	if c.Timeout == 0 {
		c.Timeout = min(c.Period, 10*time.Second)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Permanent == nil {
		c.Permanent = func(error) bool { return false }
	}
	if c.clock == nil {
		c.clock = realClock{}
	}
	return c
}

// Validate rejects timing that cannot work. It names the rule that broke.
func (c Config) Validate() error {
	if c.Renew == nil {
		return errors.New("renew: no renew function")
	}
	if c.TTL < 0 || c.Period < 0 || c.Grace < 0 || c.Margin < 0 || c.Timeout < 0 {
		return errors.New("renew: durations must not be negative")
	}
	if c.Jitter >= 1 {
		return fmt.Errorf("renew: jitter %v must be less than 1 (0 for none, negative for the default %v)", c.Jitter, DefaultJitter)
	}
	d := c.withDefaults()
	if c.TTL == 0 {
		return nil
	}
	if d.Grace >= d.TTL {
		return fmt.Errorf("renew: kill grace %v must be shorter than the TTL %v", d.Grace, d.TTL)
	}
	if d.Period >= d.TTL {
		return fmt.Errorf("renew: renew period %v must be shorter than the TTL %v", d.Period, d.TTL)
	}
	if fence := d.TTL - d.Grace - d.Margin; d.Period >= fence {
		return fmt.Errorf("renew: renew period %v leaves no retry before the fencing deadline (TTL %v - kill grace %v - margin %v = %v); renew more often or raise the TTL",
			d.Period, d.TTL, d.Grace, d.Margin, fence)
	}
	return nil
}

// Deadline returns, with c's defaults, the fencing deadline (zero without TTL)
// and renewal period of a lease confirmed by an attempt begun at lastOK.
func (c Config) Deadline(lastOK time.Time) (fence time.Time, period time.Duration) {
	d := c.withDefaults()
	if d.TTL > 0 {
		fence = d.fence(lastOK)
	}
	return fence, d.Period
}

// Keeper keeps one lease alive. Its fence is a timer of its own on the monotonic
// clock: a Renew that never returns cannot postpone it.
type Keeper struct {
	c        Config
	acquired time.Time                 // the first renewal is due a period after it
	fence    atomic.Pointer[time.Time] // zero Time when the lease has no TTL
}

// New checks c and returns a Keeper for a lease whose acquiring attempt started
// at acquired (monotonic).
func New(c Config, acquired time.Time) (*Keeper, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	k := &Keeper{c: c.withDefaults(), acquired: acquired}
	k.setFence(acquired)
	return k, nil
}

// Fence is the current monotonic fencing deadline (zero without TTL); safe from
// any goroutine.
func (k *Keeper) Fence() time.Time { return *k.fence.Load() }

// KillBy is when the caller's work must be over: Fence + Grace, moving only when
// a renewal succeeds (zero without TTL); safe from any goroutine.
func (k *Keeper) KillBy() time.Time {
	f := k.Fence()
	if f.IsZero() {
		return f
	}
	return f.Add(k.c.Grace)
}

// PastFence reports whether the fencing deadline has passed.
func (k *Keeper) PastFence() bool {
	f := k.Fence()
	return !f.IsZero() && !k.c.clock.Now().Before(f)
}

func (k *Keeper) setFence(lastOK time.Time) {
	var f time.Time
	if k.c.TTL > 0 {
		f = k.c.fence(lastOK)
	}
	k.fence.Store(&f)
}

// Run keeps the lease alive until ctx ends (nil) or it is lost: the permanent
// Renew error, or a *FenceError the moment the fence passes, even mid-Renew.
// Each Renew is bounded by the attempt timeout and the fence, and abandoned, not
// awaited, if it ignores its context.
func (k *Keeper) Run(ctx context.Context) error {
	c := k.c
	failures := 0
	var lastErr error // the last failed attempt's error, for the fence's reason
	for first := true; ; first = false {
		wait := c.jittered(c.Period)
		if first {
			// The first renewal is due a period after the lease was confirmed (possibly a
			// queued lease's older keep-alive), not after Run began.
			wait = max(k.acquired.Add(wait).Sub(c.clock.Now()), 0)
		}
		if failures > 0 {
			// Retry sooner after a transient failure, but not in a hot loop.
			wait = c.jittered(min(c.Period, time.Duration(failures)*c.Period/4+100*time.Millisecond))
		}
		fence := k.Fence()
		if !fence.IsZero() {
			if untilFence := fence.Sub(c.clock.Now()); untilFence < wait {
				wait = max(untilFence, 0)
			}
		}
		if err := c.clock.Sleep(ctx, wait); err != nil {
			return nil
		}
		if k.PastFence() {
			err := k.fenced(lastErr, false)
			c.Logger.Error("lease not renewed in time; fencing", "ttl", c.TTL, "err", err)
			return err
		}
		started := c.clock.Now()
		fenced, err := k.attempt(ctx, started)
		if err == nil && !fenced {
			k.setFence(started)
		}
		if fenced {
			err = k.fenced(lastErr, true)
		}
		if c.OnRenew != nil && (err == nil || ctx.Err() == nil) {
			c.OnRenew(started, c.clock.Now().Sub(started), err)
		}
		switch {
		case fenced:
			c.Logger.Error("lease renewal still running at the fencing deadline; fencing", "ttl", c.TTL)
			return err
		case err == nil:
			failures, lastErr = 0, nil
		case ctx.Err() != nil:
			return nil
		case c.Permanent(err):
			return err
		default:
			failures++
			lastErr = err
			c.Logger.Warn("lease renewal failed; retrying", "err", err, "failures", failures)
		}
	}
}

// stallLate is how late a noticed fence counts as a stall (SIGSTOP, a paused VM,
// swap) rather than failed renewals.
const stallLate = 500 * time.Millisecond

// fenced explains a fence noticed now.
func (k *Keeper) fenced(lastErr error, running bool) *FenceError {
	return &FenceError{Late: max(k.c.clock.Now().Sub(k.Fence()), 0), Running: running, LastErr: lastErr}
}

// FenceError is ErrFenced with its reason.
type FenceError struct {
	// Late is how long after the fence it was noticed; beyond a fraction of a second
	// the process was stalled and its job ran unsupervised.
	Late time.Duration
	// Running is set when a renewal was still running at the deadline.
	Running bool
	// LastErr is the last failed renewal's error, if one failed.
	LastErr error
}

func (e *FenceError) Error() string {
	msg := ErrFenced.Error()
	switch {
	case e.Late >= stallLate:
		msg += fmt.Sprintf(" (leasewrap was stalled: it resumed %v past the deadline)", e.Late.Round(10*time.Millisecond))
	case e.Running:
		msg += " (a renewal was still running)"
	}
	if e.LastErr != nil {
		msg += "; last renewal error: " + e.LastErr.Error()
	}
	return msg
}

// Is makes a FenceError match ErrFenced; LastErr is not unwrapped (a transient
// error is not why the lease is lost).
func (e *FenceError) Is(target error) bool { return target == ErrFenced }

// attempt runs one bounded Renew; fenced means the deadline came first and the
// call was abandoned.
func (k *Keeper) attempt(ctx context.Context, started time.Time) (fenced bool, err error) {
	c := k.c
	deadline := started.Add(c.Timeout)
	fence := k.Fence()
	if !fence.IsZero() && fence.Before(deadline) {
		deadline = fence
	}
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return abandon.At(ctx, c.clock, fence, func() error { return c.Renew(rctx) })
}

// fence is when the lease may have expired for others too early to stop the child.
func (c Config) fence(lastOK time.Time) time.Time {
	return lastOK.Add(c.TTL - c.Grace - c.Margin)
}

func (c Config) jittered(d time.Duration) time.Duration {
	if d <= 0 || c.Jitter == 0 {
		return d
	}
	return d - time.Duration(rand.Float64()*c.Jitter*float64(d))
}
