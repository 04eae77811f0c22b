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
// (69, 77) and a failed pre-step do.
type coded int

func (c coded) Error() string { return fmt.Sprintf("coded %d", int(c)) }
func (c coded) ExitCode() int { return int(c) }

func TestExitCodeIsTheOneContract(t *testing.T) {
	held := &lease.HeldError{Kind: "claim", Key: "k"}
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"child's code", &supervisor.ChildExit{Code: 3}, 3},
		{"replayed", &lease.ReplayError{ExitCode: 5}, 5},
		{"held", held, ExitConflict},
		{"held, --conflict-exit-code", &RunError{Err: held, ConflictCode: 9}, 9},
		{"wait timed out", fmt.Errorf("%w: %w", supervisor.ErrWaitTimeout, held), ExitConflict},
		{"lost", fmt.Errorf("x: %w", lease.ErrLost), ExitLost},
		{"refused", fmt.Errorf("x: %w", lease.ErrRefused), ExitRefused},
		{"usage", fmt.Errorf("%w: bad", ErrUsage), ExitUsage},
		{"not found", &supervisor.ExecError{Path: "x", Code: supervisor.CodeNotFound}, ExitNotFound},
		{"not executable", &supervisor.ExecError{Path: "x", Code: supervisor.CodeNotExecutable}, ExitNotExecutable},
		{"empty command", supervisor.ErrEmptyCommand, ExitUsage},
		{"signal while waiting", &supervisor.SignalAbort{Signal: syscall.SIGTERM}, 128 + 15},
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

// TestQuietSilencesOnlySkipsAndLoss: under -q a skipped run (held, wait
// timed out, whatever the conflict code) and a lost lease (the supervisor
// has logged it) print no final line; a usage or internal error still
// does. Without -q every error line is printed.
func TestQuietSilencesOnlySkipsAndLoss(t *testing.T) {
	held := &lease.HeldError{Kind: "flock", Key: "/k"}
	for _, tc := range []struct {
		name   string
		err    error
		silent bool
	}{
		{"held", &RunError{Err: held, ConflictCode: 0}, true},
		{"wait timed out", &RunError{Err: fmt.Errorf("%w: %w", supervisor.ErrWaitTimeout, held), ConflictCode: 75}, true},
		{"lost", &RunError{Err: fmt.Errorf("x: %w", lease.ErrLost)}, true},
		{"usage", fmt.Errorf("%w: bad", ErrUsage), false},
		{"internal", errors.New("boom"), false},
		{"refused", fmt.Errorf("x: %w", lease.ErrRefused), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, quiet := range []bool{false, true} {
				var b strings.Builder
				ExitCode(tc.err, quietSink(quiet, tc.err, &b))
				if silent := b.Len() == 0; silent != (quiet && tc.silent) {
					t.Fatalf("quiet=%v: want silent=%v, have %q", quiet, quiet && tc.silent, b.String())
				}
			}
		})
	}
}
