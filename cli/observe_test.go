package cli

import (
	"fmt"
	"testing"

	"github.com/leasewrap/leasewrap/internal/metrics"
	"github.com/leasewrap/leasewrap/supervisor"
)

func TestMetricsOutcomeOfEveryRunResult(t *testing.T) {
	wait := fmt.Errorf("held: %w", supervisor.ErrWaitTimeout)
	for _, tc := range []struct {
		name          string
		res           *supervisor.Result
		outcome, skip string
	}{
		{"failed (an error, no result)", nil, metrics.OutcomeError, ""},
		{"ran, 0", &supervisor.Result{Outcome: supervisor.Ran}, metrics.OutcomeSuccess, ""},
		{"ran, 3", &supervisor.Result{Outcome: supervisor.Ran, ExitCode: 3}, metrics.OutcomeFailure, ""},
		{"timed out", &supervisor.Result{Outcome: supervisor.TimedOut}, metrics.OutcomeTimeout, ""},
		{"lost", &supervisor.Result{Outcome: supervisor.Lost}, metrics.OutcomeLost, ""},
		{"replayed", &supervisor.Result{Outcome: supervisor.Replayed}, "", metrics.SkipReplayed},
		{"held", &supervisor.Result{Outcome: supervisor.Conflict}, "", metrics.SkipHeld},
		{"wait ran out", &supervisor.Result{Outcome: supervisor.Conflict, Cause: wait}, "", metrics.SkipWait},
		{"aborted", &supervisor.Result{Outcome: supervisor.Aborted}, "", metrics.SkipAborted},
		{"pre-step failed", &supervisor.Result{Outcome: supervisor.PreStepFailed}, metrics.OutcomeError, ""},
	} {
		if o, s := metricsOutcome(tc.res); o != tc.outcome || s != tc.skip {
			t.Errorf("%s: want %q/%q, have %q/%q", tc.name, tc.outcome, tc.skip, o, s)
		}
	}
}

func TestMetricsNameDefaultsToTheCommandsBaseName(t *testing.T) {
	for _, tc := range []struct {
		flags RunFlags
		want  string
	}{
		{RunFlags{Command: []string{"--", "/usr/local/bin/export.sh", "2026-12-02"}}, "export.sh"},
		{RunFlags{Command: []string{"./sync"}}, "sync"},
		{RunFlags{Command: []string{"sync"}, ObserveFlags: ObserveFlags{MetricsName: "nightly"}}, "nightly"},
		{RunFlags{}, ""},
	} {
		if have := tc.flags.metricsName(); have != tc.want {
			t.Errorf("%v: want %q, have %q", tc.flags.Command, tc.want, have)
		}
	}
}
