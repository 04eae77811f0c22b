package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"

	"github.com/leasewrap/leasewrap/etcd/conn"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/supervisor"
)

// Exit codes: leasewrap's, plus two for the cluster (sysexits.h).
const (
	exitUsage       = 64
	exitRefused     = 65
	exitUnavailable = 69 // EX_UNAVAILABLE: etcd unreachable within --dial-timeout
	exitInternal    = 70
	exitConflict    = 75
	exitLost        = 76
	exitNoPerm      = 77 // EX_NOPERM: TLS or authentication refused

	exitNotExecutable = 126
	exitNotFound      = 127
)

// Admin verbs (lock holders, once lookup/release): 0 done, 1 nothing to
// show or not removed, 2 error.
const (
	adminNone  = 1
	adminError = 2
)

type exitError struct {
	Code int
	Err  error
}

func (e *exitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}
func (e *exitError) Unwrap() error { return e.Err }

type runError struct {
	Err          error
	ConflictCode int
}

func (e *runError) Error() string { return e.Err.Error() }
func (e *runError) Unwrap() error { return e.Err }

// exitCode is the one place that decides the exit status.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	conflict := exitConflict
	var re *runError
	if errors.As(err, &re) {
		conflict, err = re.ConflictCode, re.Err
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintf(stderr, "leasewrap: %v\n", ee.Err)
		}
		return ee.Code
	}
	var ce *supervisor.ChildExit
	if errors.As(err, &ce) {
		return ce.Code
	}
	var replay *lease.ReplayError
	if errors.As(err, &replay) {
		return replay.ExitCode
	}
	fmt.Fprintf(stderr, "leasewrap: %v\n", conn.Describe(err))
	var abort *supervisor.SignalAbort
	switch {
	case errors.As(err, &abort):
		return 128 + int(abort.Signal)
	case errors.Is(err, errUsage):
		return exitUsage
	case errors.Is(err, conn.ErrNoPerm):
		return exitNoPerm
	case errors.Is(err, conn.ErrUnavailable):
		return exitUnavailable
	case errors.Is(err, exec.ErrNotFound):
		return exitNotFound
	case errors.Is(err, supervisor.ErrStart) && errors.Is(err, fs.ErrPermission):
		return exitNotExecutable
	case errors.Is(err, lease.ErrHeld), errors.Is(err, supervisor.ErrWaitTimeout):
		return conflict
	case errors.Is(err, lease.ErrLost):
		return exitLost
	case errors.Is(err, lease.ErrRefused):
		return exitRefused
	}
	return exitInternal
}
