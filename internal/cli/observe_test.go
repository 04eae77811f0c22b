package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/leasewrap/leasewrap/internal/metrics"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/supervisor"
)

func TestOutcomeOfEveryRunResult(t *testing.T) {
	held := &lease.HeldError{Kind: "claim", Key: "k"}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"exit 0", nil, metrics.OutcomeRan},
		{"child's code", &supervisor.ChildExit{Code: 3}, metrics.OutcomeRan},
		{"held", &RunError{Err: held, ConflictCode: 9}, metrics.OutcomeConflict},
		{"wait timed out", fmt.Errorf("%w: %w", supervisor.ErrWaitTimeout, held), metrics.OutcomeConflict},
		{"lost", fmt.Errorf("x: %w", lease.ErrLost), metrics.OutcomeLost},
		{"replayed", &lease.ReplayError{ExitCode: 0}, metrics.OutcomeReplayed},
		{"not found", &supervisor.ExecError{Path: "x", Code: supervisor.CodeNotFound}, metrics.OutcomeError},
		{"usage", fmt.Errorf("%w: bad", ErrUsage), metrics.OutcomeError},
		{"anything else", errors.New("boom"), metrics.OutcomeError},
	} {
		if have := Outcome(tc.err); have != tc.want {
			t.Errorf("%s: want %s, have %s", tc.name, tc.want, have)
		}
	}
}
