package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/leasewrap/leasewrap/renew"
)

// timing is the renewal timing of a lease as the flags describe it, with
// the defaults a TTL gives the flags that were not set.
type timing struct {
	ttl, grace, period time.Duration
	graceGiven         bool
	periodGiven        bool
}

// timing is f's timing for a lease of the given TTL.
func (f *RunFlags) timing(ttl time.Duration) timing {
	t := timing{ttl: ttl, grace: f.KillGrace, period: f.RenewEvery, graceGiven: f.graceGiven, periodGiven: f.RenewEvery != 0}
	if !t.graceGiven {
		t.grace = DefaultKillGrace(ttl)
	}
	return t
}

func (t timing) config() renew.Config {
	return renew.Config{TTL: t.ttl, Grace: t.grace, Period: t.period, Renew: func(context.Context) error { return nil }}
}

// ok tells whether the supervisor accepts t (renew's rules).
func (t timing) ok() bool { return t.config().Validate() == nil }

// window is how long after a renewal's start its fence falls (TTL − kill
// grace − margin), and the renewal period in force.
func (t timing) window() (window, period time.Duration) {
	var t0 time.Time
	fence, period := t.config().Deadline(t0)
	return fence.Sub(t0), period
}

// margin is the fence's safety margin for t's TTL.
func (t timing) margin() time.Duration {
	w, _ := t.window()
	return t.ttl - t.grace - w
}

// shown names a value as the user gave it, or as the default it is.
func shown(flag string, v time.Duration, given bool, def string) string {
	if given {
		return fmt.Sprintf("%s %v", flag, v)
	}
	return fmt.Sprintf("the default %s %v (%s)", flag, v, def)
}

// below is a readable duration strictly less than limit (whole seconds,
// else tenths, hundredths or thousandths of a second), or 0.
func below(limit time.Duration) time.Duration {
	for _, unit := range []time.Duration{time.Second, 100 * time.Millisecond, 10 * time.Millisecond, time.Millisecond} {
		if v := (limit - 1).Truncate(unit); v > 0 {
			return v
		}
	}
	return 0
}

// maxTTLSearch bounds the search for a TTL to suggest.
const maxTTLSearch = 100_000

// timingError explains a timing rule the TTL breaks in terms of the flags,
// suggesting only values that would be accepted with the other flags as given.
func (f *RunFlags) timingError(ttl time.Duration, err error) error {
	t := f.timing(ttl)
	grace := shown("--kill-grace", t.grace, t.graceGiven, "a third of --ttl, at most 10s")
	window, period := t.window()
	var why string
	switch {
	case t.grace >= ttl:
		why = fmt.Sprintf("%s must be shorter than --ttl %v: a job that must stop when the lease is lost gets SIGTERM, then SIGKILL after --kill-grace, all before the lease can expire", grace, ttl)
	case t.periodGiven && t.period >= ttl:
		why = fmt.Sprintf("--renew-every %v must be shorter than --ttl %v", t.period, ttl)
	case window <= 0:
		why = fmt.Sprintf("%s and the fence's safety margin %v use up all of --ttl %v: no renewal could come before the fencing deadline, however often it ran", grace, t.margin(), ttl)
	default:
		why = fmt.Sprintf("%s leaves no retry before the fencing deadline, which falls %v after each renewal (--ttl %v − %s − the safety margin %v)",
			shown("--renew-every", period, t.periodGiven, "a third of --ttl"), window, ttl, grace, t.margin())
	}
	var fixes []string
	// A shorter grace, the renewal period kept.
	if g := t.largestGrace(); g >= 0 && g < t.grace {
		fixes = append(fixes, fmt.Sprintf("--kill-grace %v", g))
	}
	// More frequent renewals, where that can help.
	if window > MinRenewEvery {
		for _, p := range []time.Duration{below(window / 2), below(window)} {
			c := t
			c.period = p
			if p >= MinRenewEvery && p < period && c.ok() {
				fixes = append(fixes, fmt.Sprintf("--renew-every %v", p))
				break
			}
		}
	}
	// A longer lease.
	for i, n := 0, ttl.Truncate(time.Second)+time.Second; i < maxTTLSearch; i, n = i+1, n+time.Second {
		if f.timing(n).ok() { // the flags given stay, the defaults follow the TTL
			fixes = append(fixes, fmt.Sprintf("--ttl %v", n))
			break
		}
	}
	if len(fixes) == 0 {
		return fmt.Errorf("%w: %s (%v)", ErrUsage, why, err)
	}
	return fmt.Errorf("%w: %s; accepted instead: %s", ErrUsage, why, strings.Join(fixes, ", or "))
}

// largestGrace is the longest readable kill grace t's TTL and renewal
// period accept, or -1 when none does.
func (t timing) largestGrace() time.Duration {
	c := t
	c.grace = 0
	w, period := c.window() // w: TTL − margin, the window with no grace at all
	if w <= period {
		return -1
	}
	for _, g := range []time.Duration{below(w - period), 0} {
		c.grace = g
		if c.ok() {
			return g
		}
	}
	return -1
}
