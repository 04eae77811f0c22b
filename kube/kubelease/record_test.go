package kubelease

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	coordv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.UTC)

func spec(holder string, renew time.Time, secs int32, transitions int32) coordv1.LeaseSpec {
	s := coordv1.LeaseSpec{HolderIdentity: ptr(holder), LeaseDurationSeconds: ptr(secs), LeaseTransitions: ptr(transitions)}
	if !renew.IsZero() {
		s.RenewTime = microNow(renew)
		s.AcquireTime = microNow(renew)
	}
	return s
}

func TestJudgeWithSkew(t *testing.T) {
	const skew = 5 * time.Second
	s := spec("other", t0, 15, 3)
	for _, tc := range []struct {
		name string
		s    coordv1.LeaseSpec
		now  time.Time
		want liveness
	}{
		{"just renewed", s, t0, live},
		{"past the duration, within the skew", s, t0.Add(19 * time.Second), live},
		{"at duration + skew", s, t0.Add(20 * time.Second), expired},
		{"an hour later", s, t0.Add(time.Hour), expired},
		{"renewed in our future (a fast clock)", s, t0.Add(-10 * time.Second), live},
		{"no holder", spec("", t0, 15, 3), t0.Add(time.Hour), free},
		{"released (client-go's record)", releaseSpec(s, t0), t0, free},
		{"no renewTime", spec("other", time.Time{}, 15, 3), t0.Add(time.Hour), unknown},
		{"no duration", spec("other", t0, 0, 3), t0.Add(time.Hour), unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if have := judge(tc.s, tc.now, skew); have != tc.want {
				t.Fatalf("want %v, have %v", tc.want, have)
			}
		})
	}
	if Live(s, t0.Add(19*time.Second), 0) {
		t.Fatal("without skew the holder must be expired 19 s after a 15 s renewal")
	}
}

func TestObserverRule(t *testing.T) {
	var o observer
	m0 := time.Now()
	a := spec("other", t0, 10, 1)
	if o.expired(m0, 15*time.Second) {
		t.Fatal("nothing seen: nothing expired")
	}
	o.see(a, m0)
	o.see(*a.DeepCopy(), m0.Add(5*time.Second)) // unchanged: the clock runs on
	if o.expired(m0.Add(9*time.Second), 15*time.Second) {
		t.Fatal("expired before leaseDurationSeconds of observation")
	}
	if !o.expired(m0.Add(10*time.Second), 15*time.Second) {
		t.Fatal("not expired after leaseDurationSeconds unchanged")
	}
	b := renewSpec(a, t0.Add(2*time.Second)) // renewed: the clock restarts
	o.see(b, m0.Add(10*time.Second))
	if o.expired(m0.Add(19*time.Second), 15*time.Second) {
		t.Fatal("a renewal must restart the observed clock")
	}
	if have := o.expiresAt(15 * time.Second); !have.Equal(m0.Add(20 * time.Second)) {
		t.Fatalf("want expiry at +20s, have %v", have.Sub(m0))
	}
	var n observer
	n.see(spec("other", t0, 0, 1), m0) // no duration: ours stands in, never 0
	if n.expired(m0.Add(14*time.Second), 15*time.Second) || !n.expired(m0.Add(15*time.Second), 15*time.Second) {
		t.Fatal("a record without a duration must expire after our own duration")
	}
}

func TestTakeoverSpecBumpsTransitions(t *testing.T) {
	for _, tc := range []struct {
		name string
		old  coordv1.LeaseSpec
		want int32
	}{
		{"from another holder", spec("other", t0, 15, 4), 5},
		{"from a released record", releaseSpec(spec("other", t0, 15, 4), t0), 5},
		{"from our own identity (a new run)", spec("me", t0, 15, 7), 8},
		{"no transitions recorded", coordv1.LeaseSpec{HolderIdentity: ptr("x")}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := t0.Add(time.Minute)
			s := takeoverSpec(tc.old, "me", 15*time.Second, now)
			if deref(s.LeaseTransitions) != tc.want {
				t.Fatalf("want leaseTransitions %d, have %d", tc.want, deref(s.LeaseTransitions))
			}
			if deref(s.HolderIdentity) != "me" || deref(s.LeaseDurationSeconds) != 15 {
				t.Fatalf("want holder me for 15 s, have %q for %d s", deref(s.HolderIdentity), deref(s.LeaseDurationSeconds))
			}
			if !s.AcquireTime.Time.Equal(s.RenewTime.Time) || s.RenewTime.Time.Sub(now).Abs() > time.Microsecond {
				t.Fatalf("want both times now, have acquire %v renew %v", s.AcquireTime, s.RenewTime)
			}
		})
	}
}

func TestRenewSpecKeepsAcquisition(t *testing.T) {
	cur := holderSpec("me", 15*time.Second, t0, t0, 6)
	s := renewSpec(cur, t0.Add(5*time.Second))
	if !s.AcquireTime.Time.Equal(cur.AcquireTime.Time) || deref(s.LeaseTransitions) != 6 || deref(s.HolderIdentity) != "me" {
		t.Fatalf("a renewal must keep holder, acquireTime and transitions: %+v", s)
	}
	if !s.RenewTime.Time.Equal(t0.Add(5 * time.Second).Truncate(time.Microsecond)) {
		t.Fatalf("want renewTime +5s, have %v", s.RenewTime)
	}
	if !cur.RenewTime.Time.Equal(t0.Truncate(time.Microsecond)) {
		t.Fatal("renewSpec changed its input")
	}
}

// TestReleaseSpecIsClientGos checks the ReleaseOnCancel record byte for
// byte as JSON: holderIdentity "", leaseDurationSeconds 1, both times now,
// transitions kept.
func TestReleaseSpecIsClientGos(t *testing.T) {
	cur := holderSpec("me", 15*time.Second, t0, t0.Add(3*time.Second), 9)
	b, err := json.Marshal(releaseSpec(cur, t0.Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"holderIdentity":"","leaseDurationSeconds":1,"acquireTime":"2026-12-01T12:01:00.123456Z","renewTime":"2026-12-01T12:01:00.123456Z","leaseTransitions":9}`
	if string(b) != want {
		t.Fatalf("want %s\nhave %s", want, b)
	}
}

// TestSameSpecSurvivesTheWire: a spec we write and the one the server
// hands back (through JSON, times as MicroTime) compare equal, so our own
// writes are never taken for a foreign update.
func TestSameSpecSurvivesTheWire(t *testing.T) {
	local := time.Date(2026, 12, 1, 13, 0, 0, 987654321, time.FixedZone("X", 3600))
	s := holderSpec("me", 15*time.Second, local, local.Add(time.Second), 2)
	b, _ := json.Marshal(s)
	var back coordv1.LeaseSpec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !sameSpec(s, back) {
		t.Fatalf("a spec that went through JSON no longer matches: %s", b)
	}
	other := *back.DeepCopy()
	other.RenewTime = &metav1.MicroTime{Time: back.RenewTime.Add(time.Microsecond)}
	if sameSpec(s, other) {
		t.Fatal("a renewTime one microsecond apart must differ")
	}
	other = *back.DeepCopy()
	other.HolderIdentity = ptr("you")
	if sameSpec(s, other) {
		t.Fatal("another holder must differ")
	}
}

// TestLossReason: the reason a record we did not write gives for the
// loss, one per way it departs from ours (lease.LossCause).
func TestLossReason(t *testing.T) {
	now := time.Now()
	ours := holderSpec("lw-a", 15*time.Second, now, now, 3)
	for _, tc := range []struct {
		name string
		edit func(*coordv1.LeaseSpec)
		want string
	}{
		{"another holder", func(s *coordv1.LeaseSpec) { s.HolderIdentity = ptr("b") }, `rewritten by another (holder now "b")`},
		{"released by another", func(s *coordv1.LeaseSpec) { s.HolderIdentity = ptr("") }, "released by another writer (no holder now)"},
		{"duration", func(s *coordv1.LeaseSpec) { s.LeaseDurationSeconds = ptr(int32(60)) }, "leaseDurationSeconds changed to 60 by another writer (we hold the Lease for 15)"},
		{"strategy", func(s *coordv1.LeaseSpec) { s.Strategy = ptr(coordv1.OldestEmulationVersion) }, `spec.strategy is "OldestEmulationVersion"`},
		{"strategy over another holder", func(s *coordv1.LeaseSpec) {
			s.Strategy, s.HolderIdentity = ptr(coordv1.OldestEmulationVersion), ptr("b")
		}, "coordinated leader election"},
		{"transitions", func(s *coordv1.LeaseSpec) { s.LeaseTransitions = ptr(int32(9)) }, "holder unchanged"},
	} {
		cur := *ours.DeepCopy()
		tc.edit(&cur)
		if have := lossReason(cur, ours).Error(); !strings.Contains(have, tc.want) {
			t.Errorf("%s: want %q in the reason, have %q", tc.name, tc.want, have)
		}
	}
}

// TestShowHolder: identities are quoted whole up to 128 bytes, longer ones
// cut on a rune boundary with their length.
func TestShowHolder(t *testing.T) {
	if s := showHolder("pod-1_ab12cd34"); s != "pod-1_ab12cd34" {
		t.Fatalf("a short identity changed: %q", s)
	}
	big := strings.Repeat("é", 5120) // 10240 bytes, 2 per rune
	s := showHolder(big)
	if !strings.HasSuffix(s, "…(10240 bytes)") || len(s) > holderShown+len("…(10240 bytes)") || !utf8.ValidString(s) {
		t.Fatalf("want at most %d bytes of valid UTF-8 and the length, have %q", holderShown, s)
	}
}
