package metrics

import (
	"sync"
	"time"
)

// RenewalBuckets are the renewal latency histogram's upper bounds (seconds),
// from a local file's millisecond to a renewal near the fence.
var RenewalBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Live is the state of one run as a --listen endpoint reports it. Its
// methods are safe for concurrent use and block only on its own mutex.
type Live struct {
	mu       sync.Mutex
	kind     string
	key      string
	held     bool
	lost     bool
	waiting  time.Time // since when it waits; zero when not waiting
	holder   string    // the other holder it waits for, if known
	fence    time.Time // monotonic; zero: none
	checks   bool      // acquired without a TTL: a Renewed is a liveness check, not a renewal
	renewOK  uint64
	renewErr uint64
	buckets  []uint64 // counts per RenewalBuckets bound (not cumulative)
	latSum   float64
	pid      int
	started  time.Time
}

// NewLive returns the state of a run of kind and key: not held, not lost.
func NewLive(kind, key string) *Live {
	return &Live{kind: kind, key: key, buckets: make([]uint64, len(RenewalBuckets)+1)}
}

// Waiting records that the lease is held by another (holder, if known).
func (l *Live) Waiting(holder string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.waiting.IsZero() {
		l.waiting = at
	}
	l.holder = holder
}

// Acquired records that the lease is held, fenced at fence (monotonic; zero
// without TTL, where Renewed records liveness checks).
func (l *Live) Acquired(fence time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held, l.waiting, l.holder, l.fence = true, time.Time{}, "", fence
	l.checks = fence.IsZero()
}

// Renewed records one renewal attempt or liveness check: its latency, its
// error and the fence in force after it.
func (l *Live) Renewed(latency time.Duration, err error, fence time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		l.renewOK++
	} else {
		l.renewErr++
	}
	s := latency.Seconds()
	i := 0
	for i < len(RenewalBuckets) && s > RenewalBuckets[i] {
		i++
	}
	l.buckets[i]++
	l.latSum += s
	if !fence.IsZero() {
		l.fence = fence
	}
}

// Started records the child's pid and start.
func (l *Live) Started(pid int, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pid, l.started = pid, at
}

// Lost records that the lease was lost: not held, and not healthy.
func (l *Live) Lost() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held, l.lost = false, true
}

// Released records that the lease was settled (released or published).
func (l *Live) Released() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = false
}

// Healthy reports that the lease was not lost (/healthz says which in its
// body; its status is the process's liveness, 200 either way).
func (l *Live) Healthy() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.lost
}

// Ready is /readyz: the lease is held.
func (l *Live) Ready() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}

// Families is the state as metric families at now (monotonic if it has it).
func (l *Live) Families(now time.Time) []Family {
	l.mu.Lock()
	defer l.mu.Unlock()
	base := []Label{{"kind", l.kind}, {"key", l.key}}
	with := func(n, v string) []Label { return append(append([]Label{}, base...), Label{n, v}) }
	one := func(name, help string, typ Type, v float64) Family {
		return Family{Name: name, Help: help, Type: typ, Samples: []Sample{{Labels: base, Value: v}}}
	}
	b2f := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	fams := []Family{
		one("leasewrap_lease_held", "1 while this leasewrap holds the lease, else 0.", Gauge, b2f(l.held)),
		one("leasewrap_lease_lost", "1 once the lease was lost during this run (the command is stopped), else 0.", Gauge, b2f(l.lost)),
	}
	w := 0.0
	if !l.waiting.IsZero() {
		w = now.Sub(l.waiting).Seconds()
	}
	fams = append(fams, one("leasewrap_waiting_seconds", "How long this leasewrap has been waiting for a lease held by another (0 when not waiting).", Gauge, w))
	if l.held && !l.fence.IsZero() {
		fams = append(fams, one("leasewrap_fence_seconds", "Seconds until the fencing deadline: the command is stopped then unless a renewal succeeds first.", Gauge, l.fence.Sub(now).Seconds()))
	}
	attempts := Family{Name: "leasewrap_renewals_total", Help: "Renewal attempts of the lease, by result (ok or error).", Type: Counter,
		Samples: []Sample{{Labels: with("result", "ok"), Value: float64(l.renewOK)}, {Labels: with("result", "error"), Value: float64(l.renewErr)}}}
	if l.checks {
		attempts.Name, attempts.Help = "leasewrap_lease_checks_total", "Liveness checks of a lease without TTL (nothing to renew: is it still ours?), by result (ok or error)."
	}
	fams = append(fams, attempts)
	if !l.checks {
		h := Family{Name: "leasewrap_renewal_duration_seconds", Help: "Latency of the lease's renewal attempts, in seconds.", Type: Histogram}
		var cum uint64
		for i, ub := range RenewalBuckets {
			cum += l.buckets[i]
			h.Samples = append(h.Samples, Sample{Suffix: "_bucket", Labels: with("le", formatValue(ub)), Value: float64(cum)})
		}
		cum += l.buckets[len(RenewalBuckets)]
		h.Samples = append(h.Samples,
			Sample{Suffix: "_bucket", Labels: with("le", "+Inf"), Value: float64(cum)},
			Sample{Suffix: "_sum", Labels: base, Value: l.latSum},
			Sample{Suffix: "_count", Labels: base, Value: float64(cum)})
		fams = append(fams, h)
	}
	if l.pid != 0 {
		fams = append(fams,
			one("leasewrap_child_pid", "Process id of the wrapped command.", Gauge, float64(l.pid)),
			one("leasewrap_child_start_timestamp_seconds", "Start of the wrapped command, in seconds since the Unix epoch.", Gauge, float64(l.started.UnixMilli())/1000))
	}
	return fams
}
