package supervisor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/inherit"
	"github.com/leasewrap/leasewrap/lease"
)

// Exit codes of a command that cannot be executed, as env(1) uses them.
const (
	// CodeNotExecutable: found, but not executable.
	CodeNotExecutable = 126
	// CodeNotFound: not found, or its #! interpreter is not.
	CodeNotFound = 127
)

// ErrEmptyCommand reports an empty command line or program name.
var ErrEmptyCommand = errors.New("supervisor: no command to run (give it after --)")

// ExecError reports a command that cannot be executed; it matches ErrStart.
type ExecError struct {
	Path string
	Code int
	Err  error
}

func (e *ExecError) Error() string { return fmt.Sprintf("cannot run %s: %v", e.Path, e.Err) }

func (e *ExecError) Unwrap() error { return e.Err }

// Is makes an *ExecError match ErrStart.
func (e *ExecError) Is(target error) bool { return target == ErrStart }

// resolve settles j's command, with the key and holder its environment will have.
func (j *job) resolve(dir string, env []string) error {
	holder := "" // known before acquiring when the locker says it
	if h, ok := j.locker.(lease.Identity); ok {
		holder = h.Holder()
	}
	env = append(env[:len(env):len(env)], inherit.EnvKey+"="+j.locker.Key(), inherit.EnvHolder+"="+holder)
	path, argv, err := Resolve(j.argv, dir, env)
	if err != nil {
		return err
	}
	j.path, j.argv = path, argv
	return nil
}

// defaultPath is glibc execvp's search path without PATH.
const defaultPath = "/bin:/usr/bin"

// shell runs a file execve refuses with ENOEXEC, as execvp does.
const shell = "/bin/sh"

// Resolve finds what running argv in dir with env would execute, as
// execvp(3) decides, so a command that cannot run is refused (an
// *ExecError, or ErrEmptyCommand) before any lease is taken. A file with
// neither #! nor ELF is run by /bin/sh: path is then /bin/sh and args
// [/bin/sh FILE ARGS...]. path is absolute.
func Resolve(argv []string, dir string, env []string) (path string, args []string, err error) {
	if len(argv) == 0 || argv[0] == "" {
		return "", nil, ErrEmptyCommand
	}
	if env == nil {
		env = os.Environ()
	}
	name := argv[0]
	var found string
	var hd fileHead // found's first bytes, read once
	if strings.Contains(name, "/") {
		p := absIn(dir, name)
		h, err := executable(name, p, dir)
		if err != nil {
			return "", nil, err
		}
		found, hd = p, h
	} else {
		var denied *ExecError
		for _, d := range filepath.SplitList(searchPath(env)) {
			if d == "" {
				d = "."
			}
			p := absIn(dir, filepath.Join(d, name))
			h, err := executable(name, p, dir)
			if err == nil {
				found, hd = p, h
				break
			}
			var ee *ExecError
			if errors.As(err, &ee) && ee.Code == CodeNotExecutable && denied == nil {
				denied = ee
			}
		}
		switch {
		case found != "":
		case denied != nil:
			return "", nil, denied
		default:
			return "", nil, &ExecError{Path: name, Code: CodeNotFound, Err: exec.ErrNotFound}
		}
	}
	path, args = found, argv
	if hd.needsShell() {
		path, args = shell, append([]string{shell, found}, argv[1:]...)
	}
	if err := checkArgSize(path, args, env); err != nil {
		return "", nil, err
	}
	return path, args, nil
}

// searchPath is the PATH the child would search.
func searchPath(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			return v
		}
	}
	return defaultPath
}

// absIn makes p absolute: relative to dir, or to the working directory.
func absIn(dir, p string) string {
	if !filepath.IsAbs(p) && dir != "" {
		p = filepath.Join(dir, p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// executable checks p and a script's interpreter, and returns p's first bytes.
func executable(name, p, dir string) (fileHead, error) {
	if err := checkFile(p); err != nil {
		err.Path = name
		return fileHead{}, err
	}
	h := head(p)
	interp, ok := h.interpreter()
	if !ok {
		return h, nil
	}
	if err := checkFile(absIn(dir, interp)); err != nil {
		err.Path = name
		err.Err = fmt.Errorf("its #! interpreter %s: %w", interp, err.Err)
		return fileHead{}, err
	}
	return h, nil
}

// checkFile is the part of execve(2)'s checks that can be made beforehand.
func checkFile(p string) *ExecError {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &ExecError{Code: CodeNotFound, Err: errors.Unwrap(err)}
	case err != nil:
		// env(1) gives 126 for everything but ENOENT.
		return &ExecError{Code: CodeNotExecutable, Err: errors.Unwrap(err)}
	case fi.IsDir():
		return &ExecError{Code: CodeNotExecutable, Err: errors.New("is a directory")}
	case !fi.Mode().IsRegular():
		return &ExecError{Code: CodeNotExecutable, Err: fmt.Errorf("not a regular file (%s)", fi.Mode().Type())}
	}
	if err := unix.Faccessat(unix.AT_FDCWD, p, unix.X_OK, unix.AT_EACCESS); err != nil {
		return &ExecError{Code: CodeNotExecutable, Err: err}
	}
	return nil
}

// scriptHead is how much the kernel reads for a #! line (BINPRM_BUF_SIZE).
const scriptHead = 256

// fileHead is the first bytes of a file; ok is false if unreadable.
type fileHead struct {
	b  []byte
	ok bool
}

// head reads the first bytes of p.
func head(p string) fileHead {
	f, err := os.Open(p)
	if err != nil {
		return fileHead{}
	}
	defer f.Close()
	b := make([]byte, scriptHead)
	n, err := io.ReadFull(f, b)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return fileHead{}
	}
	return fileHead{b: b[:n], ok: true}
}

// interpreter returns the program a #! line names, as the kernel parses it.
func (h fileHead) interpreter() (string, bool) {
	b := h.b
	if !h.ok || !bytes.HasPrefix(b, []byte("#!")) {
		return "", false
	}
	line := b[2:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimLeft(line, " \t")
	if i := bytes.IndexAny(line, " \t"); i >= 0 {
		line = line[:i]
	}
	if len(line) == 0 {
		return "", false
	}
	return string(line), true
}

// needsShell reports a readable file that is neither a script nor ELF.
func (h fileHead) needsShell() bool {
	if !h.ok {
		return false
	}
	if bytes.HasPrefix(h.b, []byte("\x7fELF")) {
		return false
	}
	_, script := h.interpreter()
	return !script
}

// Linux's execve(2) limits (fs/exec.c): one string at most maxArgStrlen
// bytes; all with a pointer each a quarter of the stack limit, within
// [argMax, 3/4 of _STK_LIM].
const (
	maxArgStrlen = 32 * 4096
	argMax       = 32 * 4096
	stkLim       = 8 << 20
)

// envMargin is room for the LEASEWRAP_* variables added after Resolve.
const envMargin = 16 << 10

// errArgTooLong is execve's E2BIG, found beforehand.
var errArgTooLong = errors.New("argument list too long (E2BIG)")

// checkArgSize refuses an argv and environment execve would refuse with E2BIG.
func checkArgSize(path string, argv, env []string) *ExecError {
	need := uint64(len(path)+1) + envMargin // each string with its NUL and a pointer
	for i, s := range argv {
		if len(s)+1 > maxArgStrlen {
			return &ExecError{Path: argv[0], Code: CodeNotExecutable, Err: fmt.Errorf("%w: argument %d is %d bytes, more than the %d one argument may have (MAX_ARG_STRLEN); pass it in a file or on stdin",
				errArgTooLong, i, len(s), maxArgStrlen-1)}
		}
		need += uint64(len(s)+1) + 8
	}
	for _, s := range env {
		if len(s)+1 > maxArgStrlen {
			name, _, _ := strings.Cut(s, "=")
			return &ExecError{Path: argv[0], Code: CodeNotExecutable, Err: fmt.Errorf("%w: environment variable %s is %d bytes, more than the %d one may have (MAX_ARG_STRLEN)",
				errArgTooLong, name, len(s), maxArgStrlen-1)}
		}
		need += uint64(len(s)+1) + 8
	}
	limit := uint64(stkLim / 4 * 3)
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_STACK, &rl); err == nil && rl.Cur != unix.RLIM_INFINITY {
		limit = min(limit, rl.Cur/4)
	}
	limit = max(limit, argMax)
	if need > limit {
		return &ExecError{Path: argv[0], Code: CodeNotExecutable, Err: fmt.Errorf("%w: the command line and environment take %d bytes (with %d kept for leasewrap's own variables), more than the %d the kernel copies (a quarter of the stack limit, `ulimit -s`, at most 6 MiB); pass data in a file or on stdin",
			errArgTooLong, need, envMargin, limit)}
	}
	return nil
}
