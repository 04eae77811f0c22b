package metrics

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/leasewrap/leasewrap/internal/testutil/promtest"
)

func TestTextfileRunsSkipsAndLastSuccess(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 13, 0, 0, 500_000_000, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	name := `odd "name"\`
	var b []byte
	var err error
	for i, r := range []Run{
		{Name: name, Kind: "claim", Outcome: OutcomeSuccess, Start: at(0), End: at(2), Wait: 250 * time.Millisecond},
		{Name: "other", Kind: "lock", Skip: SkipHeld, ExitCode: 75, Start: at(3), End: at(3)},
		{Name: name, Kind: "claim", Outcome: OutcomeFailure, ExitCode: 3, Start: at(10), End: at(15)},
		{Name: name, Kind: "claim", Skip: SkipHeld, ExitCode: 75, Start: at(20), End: at(21)},
		{Name: name, Kind: "claim", Skip: SkipWait, ExitCode: 75, Start: at(30), End: at(40)},
		{Name: name, Kind: "claim", Skip: SkipReplayed, Start: at(50), End: at(50)},
		{Name: name, Kind: "claim", Outcome: OutcomeError, ExitCode: 127, Start: at(60), End: at(60)},
	} {
		if b, err = Textfile(b, r); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	if !strings.HasPrefix(string(b), Marker+"\n") {
		t.Fatalf("want the marker first, have %q", b[:60])
	}
	fams := promtest.Parse(t, b)
	mine := map[string]string{"name": name, "kind": "claim"}
	for outcome, want := range map[string]float64{"success": 1, "failure": 1, "timeout": 0, "lost": 0, "error": 1} {
		if have := value(t, fams, NameRunsTotal, map[string]string{"name": name, "outcome": outcome}); have != want {
			t.Errorf("runs_total{%s}: want %v, have %v", outcome, want, have)
		}
	}
	for reason, want := range map[string]float64{"held": 1, "wait_timeout": 1, "replayed": 1, "aborted": 0} {
		if have := value(t, fams, NameSkipsTotal, map[string]string{"name": name, "reason": reason}); have != want {
			t.Errorf("skips_total{%s}: want %v, have %v", reason, want, have)
		}
	}
	// The last *run* is the failure at 10..15: skips and the error (nothing ran) leave it.
	for fam, want := range map[string]float64{
		NameLastStart: float64(at(10).UnixMilli()) / 1000, NameLastDuration: 5, NameLastExitCode: 3, NameLastWait: 0,
		NameLastSuccess: float64(at(2).UnixMilli()) / 1000, NameLastFailure: float64(at(60).UnixMilli()) / 1000,
		NameLastSeen: float64(at(60).UnixMilli()) / 1000,
	} {
		if have := value(t, fams, fam, mine); have != want {
			t.Errorf("%s: want %v, have %v", fam, want, have)
		}
	}
	if have := value(t, fams, NameSkipsTotal, map[string]string{"name": "other", "kind": "lock", "reason": "held"}); have != 1 {
		t.Errorf("other name's skip: want 1, have %v", have)
	}
	if _, ok := promtest.Value(fams, NameLastStart, map[string]string{"name": "other"}); ok {
		t.Error("a name that only skipped has a last run")
	}
	if fams[NameRunsTotal].GetType() != dto.MetricType_COUNTER || fams[NameLastSuccess].GetType() != dto.MetricType_GAUGE {
		t.Errorf("types: %v %v", fams[NameRunsTotal].GetType(), fams[NameLastSuccess].GetType())
	}
	if n := strings.Count(string(b), "# TYPE "+NameRunsTotal+" "); n != 1 {
		t.Errorf("want one TYPE line per family, have %d", n)
	}
}

// TestTextfileIsBounded: names beyond MaxNames push out the least recently
// seen; the file's size stays bounded whatever the keys are.
func TestTextfileIsBounded(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	var b []byte
	var err error
	keep := Run{Name: "nightly", Kind: "claim", Outcome: OutcomeSuccess}
	for i := range 3 * MaxNames {
		r := Run{Name: fmt.Sprintf("export-%04d-%s", i, strings.Repeat("x", MaxNameLen-20)), Kind: "reservation", Outcome: OutcomeSuccess,
			Start: t0.Add(time.Duration(i) * time.Second), End: t0.Add(time.Duration(i) * time.Second)}
		if b, err = Textfile(b, r); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 { // seen often: never the oldest
			keep.Start, keep.End = r.Start, r.End
			if b, err = Textfile(b, keep); err != nil {
				t.Fatal(err)
			}
		}
	}
	fams := promtest.Parse(t, b)
	if have := len(fams[NameRunsTotal].Metric); have != MaxNames*len(Outcomes) {
		t.Errorf("want %d names, have %d series", MaxNames, have)
	}
	if _, ok := promtest.Value(fams, NameLastSuccess, map[string]string{"name": "nightly"}); !ok {
		t.Error("the name seen most often was dropped")
	}
	if _, ok := promtest.Value(fams, NameLastSuccess, map[string]string{"name": fmt.Sprintf("export-%04d-%s", 0, strings.Repeat("x", MaxNameLen-20))}); ok {
		t.Error("the oldest name was kept")
	}
	if len(b) > 512<<10 {
		t.Errorf("a full file is %d bytes: more than half of what is read back", len(b))
	}
	t.Logf("a file of %d names (%d-byte names) is %d bytes", MaxNames, MaxNameLen, len(b))
	if err := CheckName(strings.Repeat("x", MaxNameLen+1)); err == nil {
		t.Error("a name over MaxNameLen accepted")
	}
}

func TestTextfileRefusesWhatItDidNotWrite(t *testing.T) {
	run := Run{Name: "k", Kind: "claim", Outcome: OutcomeSuccess}
	for name, body := range map[string]string{
		"garbage":          "this is not a metric file\n",
		"foreign metric":   "node_load1 0.5\n",
		"negative counter": `leasewrap_runs_total{name="k",outcome="success"} -1` + "\n",
		"fractional count": `leasewrap_runs_total{name="k",outcome="success"} 1.5` + "\n",
		"unknown outcome":  `leasewrap_runs_total{name="k",outcome="maybe"} 1` + "\n",
		"no name":          `leasewrap_runs_total{key="/etc/shadow",outcome="success"} 999999` + "\n",
		"timestamp":        `leasewrap_last_run_exit_code{name="k"} 0 1700000000000` + "\n",
		"unterminated":     `leasewrap_last_run_exit_code{name="k} 0` + "\n",
		"bad escape":       `leasewrap_last_run_exit_code{name="\q"} 0` + "\n",
		"infinite":         `leasewrap_last_run_exit_code{name="k"} +Inf` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Textfile([]byte(Marker+"\n"+body), run)
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("want a *CorruptError, have %v", err)
			}
		})
	}
	t.Run("no marker", func(t *testing.T) {
		own, _ := Textfile(nil, run)
		_, err := Textfile(own[len(Marker)+1:], run) // leasewrap's content, the marker line removed
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Line != 1 {
			t.Fatalf("want a *CorruptError on line 1, have %v", err)
		}
	})
	for _, bad := range []Run{{Name: "k", Outcome: "other"}, {Name: "k"}, {Name: "k", Outcome: OutcomeSuccess, Skip: SkipHeld}, {Outcome: OutcomeSuccess}, {Name: "a\nb", Outcome: OutcomeSuccess}} {
		if _, err := Textfile(nil, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
