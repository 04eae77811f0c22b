package cli

import (
	"errors"
	"fmt"
	"io"
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
