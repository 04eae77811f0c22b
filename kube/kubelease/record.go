package kubelease

import (
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// microNow is a wall-clock reading as the API server stores a MicroTime
// (UTC, whole microseconds, no monotonic reading), so that a spec we
// write compares equal to the one the server hands back.
func microNow(now time.Time) *metav1.MicroTime {
	t := metav1.NewMicroTime(now.Round(0).UTC().Truncate(time.Microsecond))
	return &t
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// holderSpec is the record of holder id taking or renewing the lease at
// now, client-go's LeaderElectionRecordToLeaseSpec.
func holderSpec(id string, ttl time.Duration, acquired, now time.Time, transitions int32) coordv1.LeaseSpec {
	return coordv1.LeaseSpec{
		HolderIdentity:       ptr(id),
		LeaseDurationSeconds: ptr(int32(ttl / time.Second)),
		AcquireTime:          microNow(acquired),
		RenewTime:            microNow(now),
		LeaseTransitions:     ptr(transitions),
	}
}

// takeoverSpec is the record an Update-acquisition writes over old: our
// identity, both times now, leaseTransitions one higher (client-go's
// "not the leader" branch; leasewrap always takes over as a new holder,
// even from a record naming its own identity, so the token grows).
func takeoverSpec(old coordv1.LeaseSpec, id string, ttl time.Duration, now time.Time) coordv1.LeaseSpec {
	return holderSpec(id, ttl, now, now, deref(old.LeaseTransitions)+1)
}

// renewSpec is cur with renewTime now (holder, duration, acquireTime and
// transitions kept, as client-go's fast path writes).
func renewSpec(cur coordv1.LeaseSpec, now time.Time) coordv1.LeaseSpec {
	s := *cur.DeepCopy()
	s.RenewTime = microNow(now)
	return s
}

// releaseSpec is client-go's ReleaseOnCancel record: no holder, a 1 s
// duration, both times now, transitions kept.
func releaseSpec(cur coordv1.LeaseSpec, now time.Time) coordv1.LeaseSpec {
	return coordv1.LeaseSpec{
		HolderIdentity:       ptr(""),
		LeaseDurationSeconds: ptr(int32(1)),
		AcquireTime:          microNow(now),
		RenewTime:            microNow(now),
		LeaseTransitions:     ptr(deref(cur.LeaseTransitions)),
	}
}

// sameSpec tells whether two records are the same for every field
// client-go reads (times compared as instants).
func sameSpec(a, b coordv1.LeaseSpec) bool {
	return deref(a.HolderIdentity) == deref(b.HolderIdentity) &&
		deref(a.LeaseDurationSeconds) == deref(b.LeaseDurationSeconds) &&
		deref(a.LeaseTransitions) == deref(b.LeaseTransitions) &&
		sameTime(a.AcquireTime, b.AcquireTime) && sameTime(a.RenewTime, b.RenewTime) &&
		deref(a.PreferredHolder) == deref(b.PreferredHolder) &&
		deref(a.Strategy) == deref(b.Strategy)
}

func sameTime(a, b *metav1.MicroTime) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Time.Equal(b.Time)
}

// liveness is what one reading of a record says about its holder.
type liveness int

const (
	free    liveness = iota // no holder
	live                    // renewTime + duration + skew is still ahead
	expired                 // renewTime + duration + skew has passed
	unknown                 // a holder, but no renewTime or duration to judge by
)

func (l liveness) String() string {
	return [...]string{"free", "live", "expired", "unknown"}[l]
}

// judge reads a record at wall time now: a holder is live until its
// renewTime + leaseDurationSeconds + skew. The skew margin covers the
// difference between the holder's clock (which wrote renewTime) and ours.
func judge(s coordv1.LeaseSpec, now time.Time, skew time.Duration) liveness {
	if deref(s.HolderIdentity) == "" {
		return free
	}
	until, ok := liveUntil(s, skew)
	if !ok {
		return unknown
	}
	if now.Before(until) {
		return live
	}
	return expired
}

// liveUntil is the wall time until which the record's holder is live, if
// the record has a renewTime and a positive duration.
func liveUntil(s coordv1.LeaseSpec, skew time.Duration) (time.Time, bool) {
	d := deref(s.LeaseDurationSeconds)
	if s.RenewTime == nil || d <= 0 {
		return time.Time{}, false
	}
	return s.RenewTime.Time.Add(time.Duration(d)*time.Second + skew), true
}

// observer applies client-go's observed-time rule: a record is valid for
// leaseDurationSeconds after this process last saw it change, by its own
// monotonic clock. It is used while waiting; a single reading proves
// nothing by this rule.
type observer struct {
	spec coordv1.LeaseSpec
	at   time.Time // monotonic reading when spec was first seen
	seen bool
}

// see records a reading of s at (monotonic) now; the clock restarts only
// when the record changed.
func (o *observer) see(s coordv1.LeaseSpec, now time.Time) {
	if o.seen && sameSpec(o.spec, s) {
		return
	}
	o.spec, o.at, o.seen = *s.DeepCopy(), now, true
}

// expiresAt is when the last record seen expires by the observed-time
// rule. A record without a positive duration is given fallback (our own
// lease duration) rather than none: an unreadable record never frees at
// once.
func (o *observer) expiresAt(fallback time.Duration) time.Time {
	d := time.Duration(deref(o.spec.LeaseDurationSeconds)) * time.Second
	if d <= 0 {
		d = fallback
	}
	return o.at.Add(d)
}

// expired tells whether, by the observed-time rule, the record last seen
// has expired at (monotonic) now.
func (o *observer) expired(now time.Time, fallback time.Duration) bool {
	return o.seen && !now.Before(o.expiresAt(fallback))
}

// Live tells whether a record names a holder that is live at wall time
// now by the renewTime rule (renewTime + leaseDurationSeconds + skew
// still ahead). A record without renewTime or duration is not live here.
func Live(s coordv1.LeaseSpec, now time.Time, skew time.Duration) bool {
	return judge(s, now, skew) == live
}
