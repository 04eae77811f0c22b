package metrics

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Marker is the first line of every textfile leasewrap writes; a file
// without it is never carried over nor overwritten.
const Marker = "# leasewrap textfile v2: written by leasewrap --metrics-file; a file without this line is never overwritten"

// The outcomes counted by leasewrap_runs_total; all but success are
// failures (leasewrap_last_failure_timestamp_seconds).
const (
	OutcomeSuccess = "success" // the command ran and exited 0
	OutcomeFailure = "failure" // the command ran and exited non-zero (or died of a signal)
	OutcomeTimeout = "timeout" // the command ran past --timeout and was stopped (exit 124)
	OutcomeLost    = "lost"    // the lease was lost while the command ran: it was stopped (exit 76)
	OutcomeError   = "error"   // the command could not be run: not found, a lease that could not be asked for, a refused command line
)

// Outcomes are every run outcome, in the order they are written.
var Outcomes = []string{OutcomeSuccess, OutcomeFailure, OutcomeTimeout, OutcomeLost, OutcomeError}

// The reasons counted by leasewrap_skips_total; a skip is not a run and
// changes no leasewrap_last_run_* gauge.
const (
	SkipHeld     = "held"         // the lease is held by another (tried once)
	SkipWait     = "wait_timeout" // not acquired within --wait
	SkipReplayed = "replayed"     // already done: the recorded result was replayed
	SkipAborted  = "aborted"      // a signal stopped leasewrap before the command started
)

// Skips are every skip reason, in the order they are written.
var Skips = []string{SkipHeld, SkipWait, SkipReplayed, SkipAborted}

// Bounds of one textfile.
const (
	// MaxNames is the most job names one file holds; the least recently
	// written is dropped (a counter reset if it comes back).
	MaxNames = 100
	// MaxNameLen is the longest name (the name label's value), in bytes.
	MaxNameLen = 128
)

// Run is what one invocation leaves in its textfile: Outcome for a run,
// or Skip for a skip (exactly one of them is set).
type Run struct {
	Name     string // the series' identity (--metrics-name)
	Kind     string // the lease kind, "" if the lease was never built
	Outcome  string // one of Outcomes, or ""
	Skip     string // one of Skips, or ""
	ExitCode int    // leasewrap's own exit status
	Start    time.Time
	End      time.Time
	Wait     time.Duration // from Start until the lease was acquired, Splay not included
	Splay    time.Duration // the start's delay by --splay
}

// The textfile's metric families, in the order they are written.
const (
	NameRunsTotal    = "leasewrap_runs_total"
	NameSkipsTotal   = "leasewrap_skips_total"
	NameLastSuccess  = "leasewrap_last_success_timestamp_seconds"
	NameLastFailure  = "leasewrap_last_failure_timestamp_seconds"
	NameLastStart    = "leasewrap_last_run_start_timestamp_seconds"
	NameLastDuration = "leasewrap_last_run_duration_seconds"
	NameLastExitCode = "leasewrap_last_run_exit_code"
	NameLastWait     = "leasewrap_last_run_wait_seconds"
	NameLastSplay    = "leasewrap_last_run_splay_seconds"
	NameLastSeen     = "leasewrap_last_invocation_timestamp_seconds"
)

var textfileFamilies = []struct {
	name, help string
	typ        Type
}{
	{NameRunsTotal, "Runs of the command under leasewrap, by outcome: success, failure, timeout, lost, error (could not be run).", Counter},
	{NameSkipsTotal, "Invocations of leasewrap that did not run the command, by reason: held (by another), wait_timeout, replayed, aborted (by a signal, before it started).", Counter},
	{NameLastSuccess, "End of the last run that succeeded (the command exited 0), in seconds since the Unix epoch.", Gauge},
	{NameLastFailure, "End of the last run that did not succeed (failure, timeout, lost or error), in seconds since the Unix epoch.", Gauge},
	{NameLastStart, "Start of the last run of the command (skips excluded), in seconds since the Unix epoch.", Gauge},
	{NameLastDuration, "Duration of the last run of the command, waiting for the lease included, in seconds.", Gauge},
	{NameLastExitCode, "leasewrap's exit status of the last run of the command (the command's own code, 76 lost, 124 timeout, ...).", Gauge},
	{NameLastWait, "How long the last run of the command waited for the lease (its --splay delay not included), in seconds.", Gauge},
	{NameLastSplay, "How long --splay delayed the start of the last run of the command, in seconds (0 without --splay).", Gauge},
	{NameLastSeen, "End of the last invocation of leasewrap under this name, run or skip, in seconds since the Unix epoch.", Gauge},
}

// Textfile returns prev (nil if none) with run's name updated; other names
// are kept, up to MaxNames. A prev leasewrap did not write is a
// *CorruptError, and the caller must not overwrite it.
func Textfile(prev []byte, run Run) ([]byte, error) {
	if err := run.check(); err != nil {
		return nil, err
	}
	jobs, order, err := parseTextfile(prev)
	if err != nil {
		return nil, err
	}
	j := jobs[run.Name]
	if j == nil {
		j = &job{name: run.Name, v: map[string]float64{}}
		jobs[run.Name] = j
		order = append(order, run.Name)
	}
	j.apply(run)
	order = evict(jobs, order)

	fams := make([]Family, 0, len(textfileFamilies))
	for _, f := range textfileFamilies {
		fam := Family{Name: f.name, Help: f.help, Type: f.typ}
		for _, name := range order {
			fam.Samples = append(fam.Samples, jobs[name].samples(f.name)...)
		}
		fams = append(fams, fam)
	}
	var b bytes.Buffer
	b.WriteString(Marker + "\n")
	if err := Write(&b, fams); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (r Run) check() error {
	if (r.Outcome == "") == (r.Skip == "") {
		return fmt.Errorf("metrics: a run has an outcome or a skip reason, not %q and %q", r.Outcome, r.Skip)
	}
	if r.Outcome != "" && !slices.Contains(Outcomes, r.Outcome) {
		return fmt.Errorf("metrics: unknown outcome %q", r.Outcome)
	}
	if r.Skip != "" && !slices.Contains(Skips, r.Skip) {
		return fmt.Errorf("metrics: unknown skip reason %q", r.Skip)
	}
	return CheckName(r.Name)
}

// CheckName says what is wrong with a name for the name label, if anything.
func CheckName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("the name is empty")
	case len(name) > MaxNameLen:
		return fmt.Errorf("the name is %d bytes, longer than %d", len(name), MaxNameLen)
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("the name %q holds a control character", name)
	}
	return nil
}

// job is one name's series: its kind and the value of each sample, keyed
// by family and the outcome or reason label ("" for the gauges).
type job struct {
	name, kind string
	v          map[string]float64 // family + "\x00" + outcome/reason -> value
}

func vkey(family, label string) string { return family + "\x00" + label }

func ts(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

func (j *job) apply(r Run) {
	if r.Kind != "" {
		j.kind = r.Kind
	}
	end := ts(r.End)
	j.v[vkey(NameLastSeen, "")] = end
	if r.Skip != "" {
		j.v[vkey(NameSkipsTotal, r.Skip)]++
		return
	}
	j.v[vkey(NameRunsTotal, r.Outcome)]++
	if r.Outcome == OutcomeSuccess {
		j.v[vkey(NameLastSuccess, "")] = end
	} else {
		j.v[vkey(NameLastFailure, "")] = end
	}
	if r.Outcome == OutcomeError {
		return // the command did not run: the last run's gauges stand
	}
	j.v[vkey(NameLastStart, "")] = ts(r.Start)
	j.v[vkey(NameLastDuration, "")] = r.End.Sub(r.Start).Seconds()
	j.v[vkey(NameLastExitCode, "")] = float64(r.ExitCode)
	j.v[vkey(NameLastWait, "")] = r.Wait.Seconds()
	j.v[vkey(NameLastSplay, "")] = r.Splay.Seconds()
}

// samples are j's samples of family in a fixed order: every counter
// outcome and reason (0 included, so rate() sees the first), gauges once set.
func (j *job) samples(family string) []Sample {
	base := []Label{{"name", j.name}}
	if j.kind != "" {
		base = append(base, Label{"kind", j.kind})
	}
	with := func(n, v string) []Label { return append(slices.Clone(base), Label{n, v}) }
	var out []Sample
	switch family {
	case NameRunsTotal:
		for _, o := range Outcomes {
			out = append(out, Sample{Labels: with("outcome", o), Value: j.v[vkey(family, o)]})
		}
	case NameSkipsTotal:
		for _, r := range Skips {
			out = append(out, Sample{Labels: with("reason", r), Value: j.v[vkey(family, r)]})
		}
	default:
		if v, ok := j.v[vkey(family, "")]; ok {
			out = append(out, Sample{Labels: base, Value: v})
		}
	}
	return out
}

// evict drops the names seen least recently until at most MaxNames are
// left; it returns the order of those kept.
func evict(jobs map[string]*job, order []string) []string {
	if len(order) <= MaxNames {
		return order
	}
	byAge := slices.Clone(order)
	slices.SortStableFunc(byAge, func(a, b string) int {
		x, y := jobs[a].v[vkey(NameLastSeen, "")], jobs[b].v[vkey(NameLastSeen, "")]
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	for _, name := range byAge[:len(order)-MaxNames] {
		delete(jobs, name)
	}
	return slices.DeleteFunc(order, func(n string) bool { return jobs[n] == nil })
}

// parseTextfile reads a previous textfile back into its jobs, in order.
func parseTextfile(prev []byte) (map[string]*job, []string, error) {
	jobs := map[string]*job{}
	var order []string
	if len(prev) == 0 {
		return jobs, nil, nil
	}
	first, _, _ := strings.Cut(string(prev), "\n")
	if first != Marker {
		return nil, nil, &CorruptError{Line: 1, Text: first, Why: "no leasewrap marker line first (a textfile of a leasewrap older than the marker: remove it once)"}
	}
	samples, err := parse(prev)
	if err != nil {
		return nil, nil, err
	}
	known := map[string]Type{}
	for _, f := range textfileFamilies {
		known[f.name] = f.typ
	}
	for _, p := range samples {
		typ, ok := known[p.name]
		if !ok {
			return nil, nil, &CorruptError{Line: p.line, Text: p.name, Why: "not a metric leasewrap writes"}
		}
		name := labelValue(p.labels, "name")
		if CheckName(name) != nil {
			return nil, nil, &CorruptError{Line: p.line, Text: p.name, Why: "no valid name label"}
		}
		label := ""
		switch p.name {
		case NameRunsTotal:
			label = labelValue(p.labels, "outcome")
			ok = slices.Contains(Outcomes, label)
		case NameSkipsTotal:
			label = labelValue(p.labels, "reason")
			ok = slices.Contains(Skips, label)
		}
		if !ok {
			return nil, nil, &CorruptError{Line: p.line, Text: p.name, Why: "no known outcome or reason label"}
		}
		if math.IsInf(p.value, 0) || math.IsNaN(p.value) || (typ == Counter && (p.value < 0 || p.value != math.Trunc(p.value))) {
			return nil, nil, &CorruptError{Line: p.line, Text: p.name, Why: "a value leasewrap does not write"}
		}
		j := jobs[name]
		if j == nil {
			j = &job{name: name, v: map[string]float64{}}
			jobs[name] = j
			order = append(order, name)
		}
		if k := labelValue(p.labels, "kind"); k != "" {
			j.kind = k
		}
		j.v[vkey(p.name, label)] = p.value
	}
	return jobs, order, nil
}

func labelValue(ls []Label, name string) string {
	for _, l := range ls {
		if l.Name == name {
			return l.Value
		}
	}
	return ""
}
