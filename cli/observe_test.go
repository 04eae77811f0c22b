package cli

import (
	"testing"

	"github.com/leasewrap/leasewrap/internal/metrics"
	"github.com/leasewrap/leasewrap/supervisor"
)

func TestMetricsOutcomeOfEveryRunResult(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  *supervisor.Result
		want string
	}{
		{"failed (an error, no result)", nil, metrics.OutcomeError},
		{"ran", &supervisor.Result{Outcome: supervisor.Ran, ExitCode: 3}, metrics.OutcomeRan},
		{"replayed", &supervisor.Result{Outcome: supervisor.Replayed}, metrics.OutcomeReplayed},
		{"conflict", &supervisor.Result{Outcome: supervisor.Conflict}, metrics.OutcomeConflict},
		{"lost", &supervisor.Result{Outcome: supervisor.Lost}, metrics.OutcomeLost},
		{"aborted", &supervisor.Result{Outcome: supervisor.Aborted}, metrics.OutcomeError},
		{"pre-step failed", &supervisor.Result{Outcome: supervisor.PreStepFailed}, metrics.OutcomeError},
	} {
		if have := metricsOutcome(tc.res); have != tc.want {
			t.Errorf("%s: want %s, have %s", tc.name, tc.want, have)
		}
	}
}
