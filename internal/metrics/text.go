package metrics

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Type is a metric family's type as the format spells it.
type Type string

const (
	Gauge     Type = "gauge"
	Counter   Type = "counter"
	Histogram Type = "histogram"
)

// Label is one label pair.
type Label struct{ Name, Value string }

// Sample is one line of a family: its name suffix (histograms: "_bucket",
// "_sum", "_count"; "" otherwise), labels and value.
type Sample struct {
	Suffix string
	Labels []Label
	Value  float64
}

// Family is a metric family: the # HELP and # TYPE lines and its samples.
type Family struct {
	Name    string
	Help    string
	Type    Type
	Samples []Sample
}

// Write renders families in the text exposition format, each family once
// with its # HELP and # TYPE lines, in the order given.
func Write(w io.Writer, families []Family) error {
	bw := bufio.NewWriter(w)
	for _, f := range families {
		fmt.Fprintf(bw, "# HELP %s %s\n", f.Name, escapeHelp(f.Help))
		fmt.Fprintf(bw, "# TYPE %s %s\n", f.Name, f.Type)
		for _, s := range f.Samples {
			bw.WriteString(f.Name + s.Suffix)
			if len(s.Labels) > 0 {
				bw.WriteByte('{')
				for i, l := range s.Labels {
					if i > 0 {
						bw.WriteByte(',')
					}
					bw.WriteString(l.Name + `="` + escapeLabel(l.Value) + `"`)
				}
				bw.WriteByte('}')
			}
			bw.WriteByte(' ')
			bw.WriteString(formatValue(s.Value))
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

// The format's escapes, built once.
var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
)

// escapeHelp escapes a HELP text: backslash and newline (the format's rule).
func escapeHelp(s string) string { return helpEscaper.Replace(s) }

// escapeLabel escapes a label value: backslash, double quote and newline.
func escapeLabel(s string) string { return labelEscaper.Replace(s) }

// formatValue is a sample value as Prometheus writes it (+Inf, -Inf, NaN).
func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
