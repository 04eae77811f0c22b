package cli

import (
	"errors"
	"fmt"
	"io"
)

// outputWriter is a verb's standard output; it remembers the first failed
// write (closed pipe, full disk) so the verb's contract can report it.
type outputWriter struct {
	w   io.Writer
	err error
}

func (o *outputWriter) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil && o.err == nil {
		o.err = err
	}
	return n, err
}

// outputFailed is the outcome of an admin verb whose answer could not be
// written: AdminError (2), not 70; what the verb did stands. An admin verb's
// own usage error is 2 as well: the admin contract has no 64.
func outputFailed(err error, isAdmin bool, out *outputWriter) error {
	if !isAdmin {
		return err
	}
	if out.err == nil {
		var ee *ExitError
		if errors.Is(err, ErrUsage) && !errors.As(err, &ee) {
			return &ExitError{Code: AdminError, Err: err}
		}
		return err
	}
	return &ExitError{Code: AdminError, Err: fmt.Errorf("cannot write the answer to standard output (%v); whatever the command changed stands: check with its status or lookup verb", out.err)}
}
