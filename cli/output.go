package cli

import (
	"errors"
	"fmt"
	"io"
)

// outputWriter is a verb's standard output; it remembers the first write
// that failed (a closed pipe: `leasewrap claim list | true`, a full disk),
// so the answer that was not delivered is reported in the verb's own
// contract whatever the verb did with the error.
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
// written: AdminError (2), the contract's "error", not an internal error
// (70). What the verb did (a release, an acquire) stands; the message says
// so. Run verbs write nothing to standard output: it is the child's.
//
// A usage error an admin verb finds itself (a file a flag names that
// cannot be read) is 2 as well, as kong's parse errors for admin verbs
// are (UsageCode): the admin contract has no 64.
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
