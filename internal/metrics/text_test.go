package metrics

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/leasewrap/leasewrap/internal/testutil/promtest"
)

// value is the value of the sample of fam whose labels include want.
func value(t *testing.T, fams map[string]*dto.MetricFamily, fam string, want map[string]string) float64 {
	t.Helper()
	v, ok := promtest.Value(fams, fam, want)
	if !ok {
		t.Fatalf("%s has no sample labelled %v", fam, want)
	}
	return v
}

func TestWriteEscapesAsTheSpecSays(t *testing.T) {
	nasty := "a\\b\"c\nd é"
	var b bytes.Buffer
	err := Write(&b, []Family{{Name: "x_total", Help: "help with \\ and\nnewline", Type: Counter,
		Samples: []Sample{{Labels: []Label{{"key", nasty}}, Value: 3}}},
		{Name: "y", Help: "h", Type: Gauge, Samples: []Sample{{Value: math.Inf(1)}}}})
	if err != nil {
		t.Fatal(err)
	}
	fams := promtest.Parse(t, b.Bytes())
	if have := fams["x_total"].GetHelp(); have != "help with \\ and\nnewline" {
		t.Fatalf("help: want the original text back, have %q", have)
	}
	if have := fams["x_total"].Metric[0].Label[0].GetValue(); have != nasty {
		t.Fatalf("label: want %q back, have %q", nasty, have)
	}
	if have := fams["y"].Metric[0].Gauge.GetValue(); !math.IsInf(have, 1) {
		t.Fatalf("want +Inf, have %v", have)
	}
	// Our own parser reads it back the same way (the counters carried over).
	ps, err := parse(b.Bytes())
	if err != nil || len(ps) != 2 || ps[0].labels[0].Value != nasty || ps[0].value != 3 {
		t.Fatalf("own parse: have %+v, %v", ps, err)
	}
}

func TestLiveFamiliesParse(t *testing.T) {
	l := NewLive("claim", "k")
	now := time.Now()
	l.Waiting("someone", now.Add(-3*time.Second))
	fams := promtest.Parse(t, renderLive(l, now))
	if have := value(t, fams, "leasewrap_waiting_seconds", nil); have < 2.9 || have > 3.1 {
		t.Fatalf("waiting: want 3, have %v", have)
	}
	if l.Ready() || !l.Healthy() {
		t.Fatal("waiting: want not ready, healthy")
	}
	l.Acquired(now.Add(20 * time.Second))
	l.Started(4242, now)
	l.Renewed(3*time.Millisecond, nil, now.Add(30*time.Second))
	l.Renewed(2*time.Second, errors.New("slow"), time.Time{})
	fams = promtest.Parse(t, renderLive(l, now))
	for name, want := range map[string]float64{"leasewrap_lease_held": 1, "leasewrap_fence_seconds": 30, "leasewrap_child_pid": 4242} {
		if have := value(t, fams, name, nil); have != want {
			t.Errorf("%s: want %v, have %v", name, want, have)
		}
	}
	h := fams["leasewrap_renewal_duration_seconds"].Metric[0].Histogram
	if h.GetSampleCount() != 2 || h.Bucket[1].GetCumulativeCount() != 0 || h.Bucket[2].GetCumulativeCount() != 1 {
		t.Errorf("histogram: %v", h)
	}
	if value(t, fams, "leasewrap_renewals_total", map[string]string{"result": "error"}) != 1 {
		t.Error("renewal error not counted")
	}
	if !l.Ready() {
		t.Fatal("held: want ready")
	}
	if _, ok := fams["leasewrap_lease_checks_total"]; ok {
		t.Error("a TTL lease's renewals reported as checks")
	}
	l.Lost()
	if l.Ready() || l.Healthy() {
		t.Fatal("lost: want neither ready nor healthy")
	}
}

// TestLiveChecksOfALeaseWithoutTTLAreNotRenewals: a flock kind's look at
// its descriptor every 5 s is counted as a check, never as a renewal.
func TestLiveChecksOfALeaseWithoutTTLAreNotRenewals(t *testing.T) {
	l := NewLive("flock", "/var/lock/x.lock")
	now := time.Now()
	l.Acquired(time.Time{})
	l.Renewed(time.Millisecond, nil, time.Time{})
	l.Renewed(time.Millisecond, nil, time.Time{})
	fams := promtest.Parse(t, renderLive(l, now))
	for _, f := range []string{"leasewrap_renewals_total", "leasewrap_renewal_duration_seconds", "leasewrap_fence_seconds"} {
		if _, ok := fams[f]; ok {
			t.Errorf("a lease without TTL has %s", f)
		}
	}
	if have := value(t, fams, "leasewrap_lease_checks_total", map[string]string{"result": "ok"}); have != 2 {
		t.Errorf("checks_total{ok}: want 2, have %v", have)
	}
}

func renderLive(l *Live, now time.Time) []byte {
	var b bytes.Buffer
	Write(&b, l.Families(now))
	return b.Bytes()
}
