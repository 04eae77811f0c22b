// Package promtest reads Prometheus text with the parser Prometheus and
// node_exporter use, for the tests of what leasewrap exposes (--listen
// /metrics, --metrics-file). It is apart from testutil so that the modules
// whose tests do not read metrics (etcd, kube) do not depend on it.
package promtest

import (
	"bytes"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Parse parses b, failing t when the Prometheus parser refuses it.
func Parse(t testing.TB, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the Prometheus text parser refuses it: %v\n%s", err, b)
	}
	return fams
}

// Value is the value of fam's gauge or counter sample whose labels
// include want; ok is false when there is none.
func Value(fams map[string]*dto.MetricFamily, fam string, want map[string]string) (float64, bool) {
	f, ok := fams[fam]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, lp := range m.Label {
			have[lp.GetName()] = lp.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		}
	}
	return 0, false
}
