package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/alecthomas/kong"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/supervisor"
)

// The exit codes leasewrap's run verbs use themselves (sysexits.h where one
// fits); the child's own code passes through untouched.
const (
	ExitUsage    = 64  // EX_USAGE: bad flags or arguments
	ExitRefused  = 65  // EX_DATAERR: a record leasewrap will not touch (corrupt, foreign, newer schema, unverifiable)
	ExitInternal = 70  // EX_SOFTWARE: internal or I/O error
	ExitConflict = 75  // EX_TEMPFAIL: held by another, or not acquired within --wait
	ExitLost     = 76  // the lease was lost while the child ran
	ExitTimeout  = 124 // the job ran past --timeout and was stopped (timeout(1)'s code)

	// A command that cannot run: supervisor.ExecError's Code.
	ExitNotExecutable = 126 // the command exists but cannot be executed (as sh, env(1))
	ExitNotFound      = 127 // the command was not found (as sh, env(1))
)

// The exit codes of a lease service (etcd, a Kubernetes API server) that
// could not be used: nothing was taken, nothing ran.
const (
	ExitUnavailable = 69 // EX_UNAVAILABLE: no answer in time, connection refused, 503/504
	ExitNoPerm      = 77 // EX_NOPERM: TLS, credentials or permission refused
)

// The exit codes of the admin verbs (claim acquire/release/status/renew/list
// and the other kinds' admin verbs), fixed by the claims CLI contract.
const (
	AdminHeld  = 1
	AdminError = 2
)

// ExitError carries a chosen exit status out of a verb. Err, when set, is
// printed on stderr; a nil Err prints nothing.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// RunExitCode decides a run verb's exit status from its Result: the
// command's own status passes through, a conflict is conflictCode, a loss
// 76, a signal while waiting 128+N.
func RunExitCode(res supervisor.Result, conflictCode int) int {
	switch res.Outcome {
	case supervisor.Ran, supervisor.Replayed, supervisor.PreStepFailed:
		return res.ExitCode
	case supervisor.Conflict:
		return conflictCode
	case supervisor.Lost:
		return ExitLost
	case supervisor.TimedOut:
		return ExitTimeout
	case supervisor.Aborted:
		return 128 + int(res.Signal)
	}
	return ExitInternal
}

// ExitCode decides leasewrap's exit status from the error a verb returned
// and prints that error (if any) on stderr.
func ExitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintf(stderr, "leasewrap: %v\n", explainPermission(ee.Err))
		}
		return ee.Code
	}
	fmt.Fprintf(stderr, "leasewrap: %v\n", explainPermission(err))
	var kc kong.ExitCoder // errors that carry their own status (kong's)
	var execErr *supervisor.ExecError
	switch {
	case errors.As(err, &kc):
		return kc.ExitCode()
	case errors.As(err, &execErr):
		return execErr.Code // 127 not found, 126 not executable, as env(1)
	case errors.Is(err, lease.ErrNoPerm):
		return ExitNoPerm
	case errors.Is(err, lease.ErrUnavailable):
		return ExitUnavailable
	case errors.Is(err, supervisor.ErrEmptyCommand), errors.Is(err, ErrUsage):
		return ExitUsage
	case errors.Is(err, lease.ErrHeld):
		return ExitConflict
	case errors.Is(err, lease.ErrLost):
		return ExitLost
	case errors.Is(err, lease.ErrRefused):
		return ExitRefused
	}
	return ExitInternal
}

// UsageCode is the exit status of a command line kong could not parse: 2
// for an admin verb (its contract), 64 (sysexits) for everything else.
func UsageCode(kctx *kong.Context) int {
	if kctx == nil || runVerb(kctx) != nil {
		return ExitUsage
	}
	if n := kctx.Selected(); n != nil && len(n.Children) == 0 && n.Parent != nil && n.Parent.Type == kong.CommandNode {
		return AdminError
	}
	return ExitUsage
}

// finalSink is where ExitCode writes its line about err: a skip (held, --wait
// ran out) is the lock doing its job, an INFO line; under -q a skip or a loss
// prints nothing. Anything else is an ERROR line.
func finalSink(g *Globals, err error, format string, stderr io.Writer, attrs ...slog.Attr) io.Writer {
	if err != nil && isSkip(err) {
		if g.Quiet {
			return io.Discard
		}
		return lineSink(slog.LevelInfo, newHandler(format, stderr, g.level()), attrs)
	}
	if err != nil && g.Quiet && errors.Is(err, lease.ErrLost) {
		return io.Discard
	}
	return ErrorSink(format, stderr, attrs...)
}

// isSkip tells a run skipped as designed: the lease is held by another, or
// was not acquired within --wait.
func isSkip(err error) bool {
	return errors.Is(err, lease.ErrHeld) || errors.Is(err, supervisor.ErrWaitTimeout)
}
