package metrics

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The outcomes counted by leasewrap_runs_total.
const (
	OutcomeRan      = "ran"      // the command ran (whatever its exit code) and the lease was settled
	OutcomeConflict = "conflict" // held by another, or not acquired within --wait: nothing ran
	OutcomeLost     = "lost"     // the lease was lost while the command ran: it was stopped
	OutcomeReplayed = "replayed" // already done: the recorded result was replayed, nothing ran
	OutcomeError    = "error"    // anything else: a usage, I/O or internal error
)

// Outcomes are every outcome, in the order they are written.
var Outcomes = []string{OutcomeRan, OutcomeConflict, OutcomeLost, OutcomeReplayed, OutcomeError}

// Run is what one run leaves in its textfile.
type Run struct {
	Kind, Key string
	Outcome   string        // one of Outcomes
	ExitCode  int           // leasewrap's own exit status
	Start     time.Time     // when the run began (wall clock)
	Duration  time.Duration // from Start to the end of the run, waiting included
	Wait      time.Duration // from Start until the lease was acquired, or given up
}

// The textfile's metric families, in the order they are written.
const (
	NameLastExitCode = "leasewrap_last_exit_code"
	NameLastDuration = "leasewrap_last_run_duration_seconds"
	NameLastStart    = "leasewrap_last_run_start_timestamp_seconds"
	NameLastWait     = "leasewrap_last_wait_seconds"
	NameRunsTotal    = "leasewrap_runs_total"
)

var textfileFamilies = []struct {
	name, help string
	typ        Type
}{
	{NameLastExitCode, "Exit status of leasewrap's last run of this lease (the command's own code when it ran).", Gauge},
	{NameLastDuration, "Duration of leasewrap's last run of this lease, waiting included, in seconds.", Gauge},
	{NameLastStart, "Start of leasewrap's last run of this lease, in seconds since the Unix epoch.", Gauge},
	{NameLastWait, "Time leasewrap's last run of this lease waited for it (until acquired, or given up), in seconds.", Gauge},
	{NameRunsTotal, "Runs of leasewrap for this lease, by outcome: ran, conflict, lost, replayed, error.", Counter},
}

// Textfile returns the textfile after run: prev (the file's previous
// content, nil if there was none) with this kind and key's gauges replaced
// and its leasewrap_runs_total{outcome} counter incremented. Series of
// other kinds or keys in prev are kept as they are. A prev that leasewrap
// did not write (it does not parse, or holds another metric, or a counter
// that is not a count) is a *CorruptError: its counters cannot be carried
// over, and the caller must not overwrite it.
func Textfile(prev []byte, run Run) ([]byte, error) {
	if !slices.Contains(Outcomes, run.Outcome) {
		return nil, fmt.Errorf("metrics: unknown outcome %q", run.Outcome)
	}
	samples, err := parse(prev)
	if err != nil {
		return nil, err
	}
	// series[family][labelsKey] = sample, in first-seen order.
	type series struct {
		order []string
		by    map[string]Sample
	}
	all := map[string]*series{}
	for _, f := range textfileFamilies {
		all[f.name] = &series{by: map[string]Sample{}}
	}
	put := func(name string, s Sample) {
		fs := all[name]
		k := labelsKey(s.Labels)
		if _, ok := fs.by[k]; !ok {
			fs.order = append(fs.order, k)
		}
		fs.by[k] = s
	}
	for _, p := range samples {
		if _, ok := all[p.name]; !ok {
			return nil, &CorruptError{Line: p.line, Text: p.name, Why: "not a metric leasewrap writes"}
		}
		if p.name == NameRunsTotal {
			if p.value < 0 || math.IsInf(p.value, 0) || math.IsNaN(p.value) || p.value != math.Trunc(p.value) {
				return nil, &CorruptError{Line: p.line, Text: p.name, Why: "a counter that is not a whole count"}
			}
			if !slices.Contains(Outcomes, labelValue(p.labels, "outcome")) {
				return nil, &CorruptError{Line: p.line, Text: p.name, Why: "no known outcome label"}
			}
		}
		put(p.name, Sample{Labels: p.labels, Value: p.value})
	}
	base := []Label{{"kind", run.Kind}, {"key", run.Key}}
	put(NameLastExitCode, Sample{Labels: base, Value: float64(run.ExitCode)})
	put(NameLastDuration, Sample{Labels: base, Value: run.Duration.Seconds()})
	put(NameLastStart, Sample{Labels: base, Value: float64(run.Start.UnixMilli()) / 1000})
	put(NameLastWait, Sample{Labels: base, Value: run.Wait.Seconds()})
	for _, o := range Outcomes {
		ls := append(slices.Clone(base), Label{"outcome", o})
		v := all[NameRunsTotal].by[labelsKey(ls)].Value
		if o == run.Outcome {
			v++
		}
		put(NameRunsTotal, Sample{Labels: ls, Value: v})
	}
	var fams []Family
	for _, f := range textfileFamilies {
		fam := Family{Name: f.name, Help: f.help, Type: f.typ}
		for _, k := range all[f.name].order {
			fam.Samples = append(fam.Samples, all[f.name].by[k])
		}
		fams = append(fams, fam)
	}
	var b bytes.Buffer
	if err := Write(&b, fams); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func labelValue(ls []Label, name string) string {
	for _, l := range ls {
		if l.Name == name {
			return l.Value
		}
	}
	return ""
}

// IsTextfileName reports whether name is one node_exporter's textfile
// collector reads (it reads *.prom only).
func IsTextfileName(name string) bool { return strings.HasSuffix(name, ".prom") }
