package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/supervisor"
)

// TestQuietSilencesOnlySkipsAndLoss: under -q a skipped run (held, wait
// timed out, whatever the conflict code) and a lost lease (the supervisor
// has logged it) print no final line; a usage or internal error still
// does. Without -q every error line is printed.
func TestQuietSilencesOnlySkipsAndLoss(t *testing.T) {
	held := &lease.HeldError{Kind: "flock", Key: "/k"}
	conflict := func(cause error, code int) error {
		return Outcome(supervisor.Result{Outcome: supervisor.Conflict, Cause: cause}, code, nil)
	}
	for _, tc := range []struct {
		name   string
		err    error
		silent bool
	}{
		{"held", conflict(held, 75), true},
		{"held, --conflict-exit-code 0", conflict(held, 0), true},
		{"wait timed out", conflict(fmt.Errorf("%w: %w", supervisor.ErrWaitTimeout, held), 75), true},
		{"lost", Outcome(supervisor.Result{Outcome: supervisor.Lost, Cause: fmt.Errorf("x: %w", lease.ErrLost)}, 75, nil), true},
		{"usage", fmt.Errorf("%w: bad", ErrUsage), false},
		{"internal", errors.New("boom"), false},
		{"refused", fmt.Errorf("x: %w", lease.ErrRefused), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, quiet := range []bool{false, true} {
				var b strings.Builder
				ExitCode(tc.err, finalSink(&Globals{Quiet: quiet, LogLevel: "info"}, tc.err, "text", &b))
				if silent := b.Len() == 0; silent != (quiet && tc.silent) {
					t.Fatalf("quiet=%v: want silent=%v, have %q", quiet, quiet && tc.silent, b.String())
				}
			}
		})
	}
}

// TestASkipIsNotAnError: a run skipped because the lease is held, or
// because --wait ran out, is an INFO line (dropped at --log-level warn and
// error); a lost lease and a failure stay ERROR lines.
func TestASkipIsNotAnError(t *testing.T) {
	held := &lease.HeldError{Kind: "flock", Key: "/k"}
	conflict := func(cause error) error {
		return Outcome(supervisor.Result{Outcome: supervisor.Conflict, Cause: cause}, 75, nil)
	}
	for _, tc := range []struct {
		name, level string
		err         error
		want        string // the level in the text line; "" for none
	}{
		{"held", "info", conflict(held), " INF "},
		{"wait ran out", "info", conflict(fmt.Errorf("%w: %w", supervisor.ErrWaitTimeout, held)), " INF "},
		{"held, --log-level warn", "warn", conflict(held), ""},
		{"held, --log-level debug", "debug", conflict(held), " INF "},
		{"lost", "info", Outcome(supervisor.Result{Outcome: supervisor.Lost, Cause: fmt.Errorf("x: %w", lease.ErrLost)}, 75, nil), " ERR "},
		{"lost, --log-level error", "error", Outcome(supervisor.Result{Outcome: supervisor.Lost, Cause: fmt.Errorf("x: %w", lease.ErrLost)}, 75, nil), " ERR "},
		{"internal", "warn", errors.New("boom"), " ERR "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			code := ExitCode(tc.err, finalSink(&Globals{LogLevel: tc.level}, tc.err, "text", &b))
			if tc.want == "" {
				if b.Len() != 0 {
					t.Fatalf("want no line, have %q", b.String())
				}
			} else if !strings.Contains(b.String(), tc.want) {
				t.Fatalf("want a line at%s, have %q", tc.want, b.String())
			}
			if tc.name == "held" && code != ExitConflict {
				t.Fatalf("want exit %d, have %d", ExitConflict, code)
			}
		})
	}
}
