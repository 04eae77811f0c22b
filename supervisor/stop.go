package supervisor

import (
	"time"

	"golang.org/x/sys/unix"
)

// stopper ends a job: the stop signal once, then SIGKILL at the earlier of
// the lease's kill deadline and the stop's (due + grace). Both are absolute
// monotonic instants, so after a stall it acts on what is due by now.
type stopper struct {
	job         *jobForm
	sig         unix.Signal      // the stop signal
	grace       time.Duration    // between the stop signal and SIGKILL
	leaseKillBy func() time.Time // zero: a lease without TTL
	stopping    bool             // the stop signal was sent
	killBy      time.Time        // the stop's own kill deadline, once stopping
	killed      bool             // SIGKILL was sent
	timer       *time.Timer
	armedAt     time.Time // what timer is set for
}

func newStopper(job *jobForm, sig unix.Signal, grace time.Duration, leaseKillBy func() time.Time) *stopper {
	s := &stopper{job: job, sig: sig, grace: grace, leaseKillBy: leaseKillBy}
	s.arm()
	return s
}

// C delivers when the kill deadline armed may have come (nil: none).
func (s *stopper) C() <-chan time.Time {
	if s.timer == nil {
		return nil
	}
	return s.timer.C
}

// close disarms the timer, so no signal reaches a reused job id.
func (s *stopper) close() {
	if s.timer != nil {
		s.timer.Stop()
	}
}

// stop asks the job to stop, as due at due: the stop signal and SIGCONT,
// then SIGKILL at the deadline; SIGKILL at once with now or no grace.
func (s *stopper) stop(due time.Time, now bool) {
	if s.killed {
		return
	}
	if now || s.grace == 0 {
		s.kill()
		return
	}
	if !s.stopping {
		s.stopping = true
		s.killBy = due.Add(s.grace)
		s.job.signal(s.sig)
		s.job.signal(unix.SIGCONT)
	}
	s.due()
}

// due sends SIGKILL once a kill deadline passed (expired: the lease's),
// else arms the timer for the next.
func (s *stopper) due() (expired bool) {
	if s.killed {
		return false
	}
	now := time.Now()
	if lk := s.leaseKillBy(); !lk.IsZero() && !now.Before(lk) {
		s.kill()
		return true
	}
	if s.stopping && !now.Before(s.killBy) {
		s.kill()
		return false
	}
	s.arm()
	return false
}

func (s *stopper) kill() {
	s.killed = true
	s.job.signal(unix.SIGKILL)
	s.close()
}

// arm sets the timer for the earliest kill deadline.
func (s *stopper) arm() {
	at := s.leaseKillBy()
	if s.stopping && (at.IsZero() || s.killBy.Before(at)) {
		at = s.killBy
	}
	if at.IsZero() || at.Equal(s.armedAt) && s.timer != nil {
		return
	}
	s.armedAt = at
	if s.timer == nil {
		s.timer = time.NewTimer(time.Until(at))
		return
	}
	s.timer.Reset(time.Until(at))
}
