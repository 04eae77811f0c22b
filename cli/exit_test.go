package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/supervisor"
)

// coded is an error carrying its own status, as the etcd connection errors
// (69, 77) do.
type coded int

func (c coded) Error() string { return fmt.Sprintf("coded %d", int(c)) }
func (c coded) ExitCode() int { return int(c) }

func TestRunExitCodeIsTheOneContract(t *testing.T) {
	for _, tc := range []struct {
		name     string
		res      supervisor.Result
		conflict int
		want     int
	}{
		{"child's code", supervisor.Result{Outcome: supervisor.Ran, ExitCode: 3}, 75, 3},
		{"child's signal death", supervisor.Result{Outcome: supervisor.Ran, ExitCode: 143, Signal: syscall.SIGTERM}, 75, 143},
		{"replayed", supervisor.Result{Outcome: supervisor.Replayed, ExitCode: 5}, 75, 5},
		{"held", supervisor.Result{Outcome: supervisor.Conflict}, 75, ExitConflict},
		{"held, --conflict-exit-code", supervisor.Result{Outcome: supervisor.Conflict}, 9, 9},
		{"lost", supervisor.Result{Outcome: supervisor.Lost, ExitCode: 143}, 75, ExitLost},
		{"signal while waiting", supervisor.Result{Outcome: supervisor.Aborted, Signal: syscall.SIGTERM}, 75, 128 + 15},
		{"pre-step failed", supervisor.Result{Outcome: supervisor.PreStepFailed, ExitCode: 4}, 75, 4},
		{"no outcome", supervisor.Result{}, 75, ExitInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if have := RunExitCode(tc.res, tc.conflict); have != tc.want {
				t.Fatalf("want %d, have %d", tc.want, have)
			}
			if have := ExitCode(Outcome(tc.res, tc.conflict, nil), io.Discard); have != tc.want {
				t.Fatalf("through Outcome and ExitCode: want %d, have %d", tc.want, have)
			}
		})
	}
}

func TestExitCodeOfFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"held", &lease.HeldError{Kind: "claim", Key: "k"}, ExitConflict},
		{"lost", fmt.Errorf("x: %w", lease.ErrLost), ExitLost},
		{"refused", fmt.Errorf("x: %w", lease.ErrRefused), ExitRefused},
		{"usage", fmt.Errorf("%w: bad", ErrUsage), ExitUsage},
		{"not found", &supervisor.ExecError{Path: "x", Code: supervisor.CodeNotFound}, ExitNotFound},
		{"not executable", &supervisor.ExecError{Path: "x", Code: supervisor.CodeNotExecutable}, ExitNotExecutable},
		{"empty command", supervisor.ErrEmptyCommand, ExitUsage},
		{"own status (etcd unreachable)", fmt.Errorf("dial: %w", coded(69)), 69},
		{"chosen status", &ExitError{Code: AdminError}, AdminError},
		{"anything else", errors.New("boom"), ExitInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if have := ExitCode(tc.err, io.Discard); have != tc.want {
				t.Fatalf("want %d, have %d", tc.want, have)
			}
		})
	}
}

func TestScanArgs(t *testing.T) {
	for _, tc := range []struct {
		args          []string
		words         string
		help, version bool
		format        string
	}{
		{[]string{"claim", "run", "k", "--", "x", "--help"}, "claim run", false, false, ""},
		{[]string{"--log-format", "json", "claim", "run", "k"}, "claim run", false, false, "json"},
		{[]string{"--log-format=text", "--log-level", "debug", "lock"}, "lock", false, false, "text"},
		{[]string{"-q", "reserve", "--help"}, "reserve", true, false, ""},
		{[]string{"--version"}, "", false, true, ""},
		{[]string{"claim", "run", "k", "--log-format", "json", "--", "--log-format", "text"}, "claim run", false, false, "json"},
	} {
		a := ScanArgs(tc.args)
		if fmt.Sprint(a.Words) != fmt.Sprint(splitWords(tc.words)) || a.Help != tc.help || a.Version != tc.version || a.LogFormat != tc.format {
			t.Errorf("%q: want %q help=%v version=%v format=%q, have %+v", tc.args, tc.words, tc.help, tc.version, tc.format, a)
		}
	}
}

func splitWords(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Fields(s)
}
