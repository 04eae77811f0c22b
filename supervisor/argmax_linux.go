package supervisor

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// Linux's limits on what execve(2) copies (fs/exec.c, include/uapi/linux/
// binfmts.h): one string at most maxArgStrlen bytes with its NUL; all of
// them, with a pointer each, at most a quarter of the stack limit, but no
// less than argMax and no more than three quarters of the kernel's 8 MiB
// _STK_LIM.
const (
	maxArgStrlen = 32 * 4096
	argMax       = 32 * 4096
	stkLim       = 8 << 20
)

// envMargin is what leasewrap adds to the child's environment after Resolve
// (LEASEWRAP_* variables: kind, key, holder, run id, descriptor, fence):
// room for them, key and holder included, so a command Resolve passed is
// not refused by the exec for their sake.
const envMargin = 16 << 10

// errArgTooLong is execve's E2BIG, found beforehand.
var errArgTooLong = errors.New("argument list too long (E2BIG)")

// checkArgSize refuses, as execve would with E2BIG, an argv (run by path)
// and environment the kernel would not copy: one string longer than
// MAX_ARG_STRLEN, or all of them past the limit RLIMIT_STACK sets. The
// error says which and by how much; its code is CodeNotExecutable, what
// env(1) and sh give for E2BIG.
func checkArgSize(path string, argv, env []string) *ExecError {
	for i, s := range argv {
		if len(s)+1 > maxArgStrlen {
			return &ExecError{Path: argv[0], Code: CodeNotExecutable, Err: fmt.Errorf("%w: argument %d is %d bytes, more than the %d one argument may have (MAX_ARG_STRLEN); pass it in a file or on stdin",
				errArgTooLong, i, len(s), maxArgStrlen-1)}
		}
	}
	for _, s := range env {
		if len(s)+1 > maxArgStrlen {
			name, _, _ := strings.Cut(s, "=")
			return &ExecError{Path: argv[0], Code: CodeNotExecutable, Err: fmt.Errorf("%w: environment variable %s is %d bytes, more than the %d one may have (MAX_ARG_STRLEN)",
				errArgTooLong, name, len(s), maxArgStrlen-1)}
		}
	}
	limit := uint64(stkLim / 4 * 3)
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_STACK, &rl); err == nil && rl.Cur != unix.RLIM_INFINITY {
		limit = min(limit, rl.Cur/4)
	}
	limit = max(limit, argMax)
	need := uint64(len(path)+1) + envMargin
	for _, s := range argv {
		need += uint64(len(s)+1) + 8
	}
	for _, s := range env {
		need += uint64(len(s)+1) + 8
	}
	if need > limit {
		return &ExecError{Path: argv[0], Code: CodeNotExecutable, Err: fmt.Errorf("%w: the command line and environment take %d bytes (with %d kept for leasewrap's own variables), more than the %d the kernel copies (a quarter of the stack limit, `ulimit -s`, at most 6 MiB); pass data in a file or on stdin",
			errArgTooLong, need, envMargin, limit)}
	}
	return nil
}
