package kubelease

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

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

// maxTransitions is the largest leaseTransitions, an int32's: a takeover
// cannot raise the fencing token past it.
const maxTransitions = 1<<31 - 1

// holderShown is how much of a holder identity a message quotes: an
// identity is free text of any length (10 KB ones have been seen), and a
// log line is not the place for all of it.
const holderShown = 128

// showHolder is id as messages quote it: whole when short, else its first
// holderShown bytes (on a rune boundary), "…" and its length.
func showHolder(id string) string {
	if len(id) <= holderShown {
		return id
	}
	cut := holderShown
	for cut > 0 && !utf8.RuneStart(id[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…(%d bytes)", id[:cut], len(id))
}

// lossReason says how cur, a record we did not write, departs from ours,
// the last record we wrote: a coordinated leader election's strategy
// written on it, another holder, another lease duration, or another
// writer's change to the rest.
func lossReason(cur, ours coordv1.LeaseSpec) error {
	switch {
	case deref(cur.Strategy) != "" && deref(cur.Strategy) != deref(ours.Strategy):
		return &CoordinatedError{Strategy: string(deref(cur.Strategy)), PreferredHolder: deref(cur.PreferredHolder)}
	case deref(cur.HolderIdentity) == "":
		return errors.New("released by another writer (no holder now)")
	case deref(cur.HolderIdentity) != deref(ours.HolderIdentity):
		return fmt.Errorf("rewritten by another (holder now %s)", holderName(cur))
	case deref(cur.LeaseDurationSeconds) != deref(ours.LeaseDurationSeconds):
		return fmt.Errorf("leaseDurationSeconds changed to %d by another writer (we hold the Lease for %d)", deref(cur.LeaseDurationSeconds), deref(ours.LeaseDurationSeconds))
	case deref(cur.PreferredHolder) != deref(ours.PreferredHolder):
		return fmt.Errorf("preferredHolder set to %q by another writer", showHolder(deref(cur.PreferredHolder)))
	}
	return errors.New("rewritten by another writer (holder unchanged; renewTime, acquireTime or leaseTransitions changed)")
}

// CoordinatedError reports a Lease whose spec.strategy is set: it belongs
// to coordinated leader election (KEP-4355), whose coordinator picks the
// holder. leasewrap does not take such a Lease (unless asked), and one it
// holds is lost the moment a strategy is written on it.
type CoordinatedError struct {
	Strategy, PreferredHolder string
}

func (e *CoordinatedError) Error() string {
	s := fmt.Sprintf("spec.strategy is %q", e.Strategy)
	if e.PreferredHolder != "" {
		s += fmt.Sprintf(" (preferredHolder %q)", showHolder(e.PreferredHolder))
	}
	return s + ": the Lease belongs to coordinated leader election (KEP-4355), whose coordinator picks its holder"
}
