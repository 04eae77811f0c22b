package main

import (
	"errors"
	"os/exec"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/cli"
)

// siblingExecError gives a failed exec of a sibling the shell's status:
// 127 missing, 126 not executable.
func siblingExecError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, unix.ENOENT):
		return &cli.ExitError{Code: cli.ExitNotFound, Err: err}
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.ENOEXEC), errors.Is(err, unix.EPERM):
		return &cli.ExitError{Code: cli.ExitNotExecutable, Err: err}
	}
	return err
}
