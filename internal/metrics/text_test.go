package metrics

import (
	"bytes"
	"errors"
	"math"
	"strings"
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

func TestTextfileCarriesCountersAndKeepsOtherKeys(t *testing.T) {
	start := time.Date(2026, 12, 1, 13, 0, 0, 500_000_000, time.UTC)
	run := Run{Kind: "claim", Key: `odd "key"\`, Outcome: OutcomeRan, ExitCode: 0, Start: start, Duration: 1500 * time.Millisecond, Wait: 250 * time.Millisecond}
	other := Run{Kind: "lock", Key: "nightly", Outcome: OutcomeConflict, ExitCode: 75, Start: start, Duration: time.Second}
	var b []byte
	var err error
	for _, r := range []Run{run, other, run, {Kind: run.Kind, Key: run.Key, Outcome: OutcomeLost, ExitCode: 76, Start: start}} {
		if b, err = Textfile(b, r); err != nil {
			t.Fatal(err)
		}
	}
	fams := promtest.Parse(t, b)
	mine := map[string]string{"kind": "claim", "key": run.Key}
	for outcome, want := range map[string]float64{"ran": 2, "lost": 1, "conflict": 0, "replayed": 0, "error": 0} {
		if have := value(t, fams, NameRunsTotal, map[string]string{"kind": "claim", "key": run.Key, "outcome": outcome}); have != want {
			t.Errorf("runs_total{%s}: want %v, have %v", outcome, want, have)
		}
	}
	if have := value(t, fams, NameRunsTotal, map[string]string{"kind": "lock", "key": "nightly", "outcome": "conflict"}); have != 1 {
		t.Errorf("other key's counter: want 1, have %v", have)
	}
	if have := value(t, fams, NameLastExitCode, mine); have != 76 {
		t.Errorf("last exit code: want 76, have %v", have)
	}
	if have := value(t, fams, NameLastStart, mine); have != 1796130000.5 {
		t.Errorf("start: want 1796130000.5, have %v", have)
	}
	if have := value(t, fams, NameLastExitCode, map[string]string{"kind": "lock", "key": "nightly"}); have != 75 {
		t.Errorf("other key's gauge: want 75 kept, have %v", have)
	}
	if fams[NameRunsTotal].GetType() != dto.MetricType_COUNTER || fams[NameLastWait].GetType() != dto.MetricType_GAUGE {
		t.Errorf("types: %v %v", fams[NameRunsTotal].GetType(), fams[NameLastWait].GetType())
	}
	if n := strings.Count(string(b), "# TYPE "+NameRunsTotal+" "); n != 1 {
		t.Errorf("want one TYPE line per family, have %d", n)
	}
}

func TestTextfileRefusesWhatItDidNotWrite(t *testing.T) {
	run := Run{Kind: "claim", Key: "k", Outcome: OutcomeRan}
	for name, prev := range map[string]string{
		"garbage":          "this is not a metric file\n",
		"foreign metric":   "node_load1 0.5\n",
		"negative counter": `leasewrap_runs_total{kind="claim",key="k",outcome="ran"} -1` + "\n",
		"fractional count": `leasewrap_runs_total{kind="claim",key="k",outcome="ran"} 1.5` + "\n",
		"unknown outcome":  `leasewrap_runs_total{kind="claim",key="k",outcome="maybe"} 1` + "\n",
		"timestamp":        `leasewrap_last_exit_code{kind="claim",key="k"} 0 1700000000000` + "\n",
		"unterminated":     `leasewrap_last_exit_code{kind="claim",key="k} 0` + "\n",
		"bad escape":       `leasewrap_last_exit_code{kind="claim",key="\q"} 0` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Textfile([]byte(prev), run)
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("want a *CorruptError, have %v", err)
			}
		})
	}
	if _, err := Textfile(nil, Run{Outcome: "other"}); err == nil {
		t.Fatal("unknown outcome accepted")
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
	l.Lost()
	if l.Ready() || l.Healthy() {
		t.Fatal("lost: want neither ready nor healthy")
	}
}

func renderLive(l *Live, now time.Time) []byte {
	var b bytes.Buffer
	Write(&b, l.Families(now))
	return b.Bytes()
}
