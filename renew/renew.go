package renew

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"
)

// ErrFenced reports that no renewal succeeded before the self-fencing
// deadline: the lease must be treated as lost.
var ErrFenced = errors.New("renew: no successful renewal before the fencing deadline")

// Config describes how to keep one lease alive.
type Config struct {
	// Renew extends the lease (or, with TTL 0, checks it is still ours).
	Renew func(ctx context.Context) error
	// Permanent reports whether an error from Renew means the lease is
	// gone for good. Any other error is retried.
	Permanent func(error) bool

	// TTL of the lease; 0 means it does not expire and Renew only checks.
	TTL time.Duration
	// Period between renewals; 0 means TTL/3 (or 5 s when TTL is 0).
	Period time.Duration
	// Jitter is the fraction of Period by which each wait is shortened at
	// random, so many wrappers do not renew in lockstep. Default 0.1.
	Jitter float64
	// Grace is the time the caller needs to stop its work after the lease
	// is lost (the child's kill grace). Fencing happens Grace+Margin before
	// the lease would expire.
	Grace time.Duration
	// Margin is the extra safety before expiry; 0 means max(1s, TTL/20).
	Margin time.Duration
	// Timeout bounds one Renew call; 0 means min(Period, 10s).
	Timeout time.Duration

	Logger *slog.Logger

	now   func() time.Time // monotonic readings; tests replace it
	sleep func(ctx context.Context, d time.Duration) error
}

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
	if c.Jitter == 0 {
		c.Jitter = 0.1
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
	if c.now == nil {
		c.now = time.Now
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
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
	if c.Jitter < 0 || c.Jitter >= 1 {
		return fmt.Errorf("renew: jitter %v must be in [0, 1)", c.Jitter)
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

// Run keeps the lease alive until ctx ends (returning nil) or the lease is
// lost: it returns the permanent error from Renew, or ErrFenced. acquired is
// the monotonic time at which the lease was taken (its TTL counts from
// there).
func Run(ctx context.Context, c Config, acquired time.Time) error {
	if err := c.Validate(); err != nil {
		return err
	}
	c = c.withDefaults()
	lastOK := acquired
	failures := 0
	for {
		wait := c.jittered(c.Period)
		if failures > 0 {
			// Retry sooner after a transient failure, but not in a hot loop.
			wait = c.jittered(min(c.Period, time.Duration(failures)*c.Period/4+100*time.Millisecond))
		}
		if c.TTL > 0 {
			if untilFence := c.fence(lastOK).Sub(c.now()); untilFence < wait {
				wait = max(untilFence, 0)
			}
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil
		}
		if c.TTL > 0 && !c.now().Before(c.fence(lastOK)) {
			c.Logger.Error("lease not renewed in time; fencing", "last_renewal", lastOK, "ttl", c.TTL)
			return ErrFenced
		}
		rctx, cancel := context.WithTimeout(ctx, c.Timeout)
		started := c.now()
		err := c.Renew(rctx)
		cancel()
		switch {
		case err == nil:
			lastOK = started
			failures = 0
		case ctx.Err() != nil:
			return nil
		case c.Permanent(err):
			return err
		default:
			failures++
			c.Logger.Warn("lease renewal failed; retrying", "err", err, "failures", failures)
		}
	}
}

// fence is the instant after which the lease may have expired for others
// early enough that the child could not be stopped in time.
func (c Config) fence(lastOK time.Time) time.Time {
	return lastOK.Add(c.TTL - c.Grace - c.Margin)
}

func (c Config) jittered(d time.Duration) time.Duration {
	if d <= 0 || c.Jitter == 0 {
		return d
	}
	return d - time.Duration(rand.Float64()*c.Jitter*float64(d))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
