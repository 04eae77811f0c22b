package supervisor

import (
	"context"
	"fmt"
	"time"

	"github.com/leasewrap/leasewrap/internal/abandon"
	"github.com/leasewrap/leasewrap/internal/fault"
	"github.com/leasewrap/leasewrap/lease"
)

// timedOutCode is the status a timed-out job that exited 0 is settled with.
const timedOutCode = 124

// settleFloor is the least time a settle is given past the lease's expiry.
const settleFloor = time.Second

// settle settles a lease whose job is over. Finish is abandoned at
// FinishTimeout or the lease's expiry; abandoned at the expiry, after a
// loss or past the fence, that is a loss.
func (r *runner) settle(a *acquired, end jobEnd) error {
	if r.cfg.Subreaper {
		reapOrphans()
	}
	res := end.status
	res.Lost = end.loss != nil
	if end.timedOut && !res.Lost {
		res.TimedOut = true
		if res.ExitCode == 0 {
			res.ExitCode = timedOutCode // a clean exit on the stop signal is still a failure
		}
	}
	now := time.Now()
	deadline := now.Add(r.cfg.FinishTimeout)
	atExpiry := false
	if k := end.keeper; k != nil {
		res.Fence = k.Fence()
		res.PastFence = !res.Lost && k.PastFence()
		if ttl := a.lease.TTL(); ttl > 0 {
			exp := end.lastOK.Add(ttl)
			if floor := now.Add(settleFloor); exp.Before(floor) {
				exp = floor
			}
			if exp.Before(deadline) {
				deadline, atExpiry = exp, true
			}
		}
	}
	fault.Point("supervisor.before-finish")
	err := r.finish(a.lease, res, deadline)
	if a.child.guard != nil {
		a.child.guard.done() // cleared when the job ended: reap it now
	}
	if _, abandoned := err.(*settleTimeout); abandoned && (atExpiry || res.Lost || res.PastFence) {
		err = fmt.Errorf("%w: %w", lease.ErrLost, err)
	}
	r.emit(Event{Type: EventFinished, Holder: a.lease.Holder(), PID: a.child.pid, Err: err})
	return err
}

// settleTimeout reports a Finish abandoned at its deadline.
type settleTimeout struct{ after time.Duration }

func (e *settleTimeout) Error() string {
	return fmt.Sprintf("settling the lease did not finish within %v; abandoned (it may be stuck in the kernel)", e.after.Round(time.Millisecond))
}

// finish calls ls.Finish, abandoning it (a *settleTimeout) at deadline.
func (r *runner) finish(ls lease.Lease, res lease.Result, deadline time.Time) error {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	abandoned, err := abandon.At(context.Background(), abandon.Real{}, deadline, func() error { return ls.Finish(ctx, res) })
	if abandoned {
		return &settleTimeout{after: time.Since(start)}
	}
	return err
}
