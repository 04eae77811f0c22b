package supervisor

import (
	"context"
	"fmt"
	"time"

	"github.com/leasewrap/leasewrap/lease"
)

// checkStartMargin refuses to start a job under ls, acquired by an attempt
// that began at at, when less than one renewal period is left before its
// fencing deadline (at + TTL - kill grace - margin): a slow acquisition (a
// connection that stalled, a paused server) would otherwise start a job
// that is fenced before its first renewal, or at once. The lease is then
// released by the caller and the run reports a conflict (lease.ErrHeld,
// 75): nothing ran. A lease without a TTL has no fence to check.
func (c *Config) checkStartMargin(ls lease.Lease, at time.Time) error {
	ttl := ls.TTL()
	if ttl <= 0 {
		return nil
	}
	rc := c.renewConfig(ttl, func(context.Context) error { return nil })
	if rc.Validate() != nil {
		return nil // ValidateTiming reports it
	}
	fence, period := rc.Deadline(at)
	if left := time.Until(fence); left < period {
		return &lateStartError{took: time.Since(at), left: left, period: period}
	}
	return nil
}

// lateStartError is a lease acquired too late to start the job under it:
// a conflict (matches lease.ErrHeld, the conflict exit code), nothing ran.
type lateStartError struct{ took, left, period time.Duration }

func (e *lateStartError) Error() string {
	return fmt.Sprintf("supervisor: the lease was acquired %v after the attempt began, leaving %v before its fencing deadline, less than one renewal period (%v); released, the command did not run (a slow etcd or file system: try again)",
		e.took.Round(time.Millisecond), e.left.Round(time.Millisecond), e.period)
}

func (e *lateStartError) Is(target error) bool { return target == lease.ErrHeld }
