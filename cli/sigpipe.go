package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// Streams returns the standard output and error an invocation with args
// writes to. A reader that has gone (`… | head`, a dead log shipper) must
// not end leasewrap where something would be lost by that: a supervisor
// whose log write fails must go on supervising (or the child runs on
// unsupervised and its result is never published), and an admin verb
// must say it could not answer (exit 2).
//
// So every invocation but help and the version writes through
// close-on-exec duplicates of fds 1 and 2. The Go runtime raises SIGPIPE
// only for writes to fds 1 and 2 themselves; a write to a duplicate fails
// with EPIPE, which logging drops and the admin contract turns into exit
// 2. SIGPIPE itself is neither caught nor ignored, so a command leasewrap
// starts gets its default disposition, and no signal-mask thread is
// started for it.
//
// Help and the version (Args.PrintsOnly) only print and get os.Stdout
// and os.Stderr themselves: like any filter they die of SIGPIPE when
// their reader has gone. A descriptor that cannot be duplicated (closed)
// is returned as it is.
func Streams(args []string) (stdout, stderr *os.File) {
	if ScanArgs(args).PrintsOnly() {
		return os.Stdout, os.Stderr
	}
	return dupStream(os.Stdout), dupStream(os.Stderr)
}

// dupStream returns a close-on-exec duplicate of f, or f if it cannot be
// duplicated.
func dupStream(f *os.File) *os.File {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return f
	}
	return os.NewFile(uintptr(fd), f.Name())
}
