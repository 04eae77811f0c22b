package cli

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// CatchSIGPIPE keeps a broken stderr (a log shipper that died, `2>&1 |
// true`) from killing leasewrap: a failed log write must never stop
// supervision, or the child runs on unsupervised and its result is never
// published. SIGPIPE is caught, not ignored, so the child does not inherit
// an ignored SIGPIPE (caught signals are reset to their default at exec);
// leasewrap's own writes then fail with EPIPE, which logging discards.
func CatchSIGPIPE() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}

// Streams returns the standard output and error an invocation with args
// writes to, prepared so that a reader that has gone (`… | head`, a dead
// log shipper) ends it only where nothing is lost by that:
//
//   - help and the version (Args.PrintsOnly) only print: os.Stdout and
//     os.Stderr as they are, so they die of SIGPIPE as any filter does;
//   - a verb that runs a command (Args.RunsCommand) catches SIGPIPE
//     (CatchSIGPIPE): its supervisor registers the signals it forwards
//     anyway, and the command must not inherit an ignored SIGPIPE;
//   - every other verb (the admin verbs) gets duplicates of fds 1 and 2,
//     closed on exec. The Go runtime raises SIGPIPE only for writes to fds
//     1 and 2 themselves; a write to a duplicate fails with EPIPE, which
//     the admin contract turns into exit 2. That costs two fcntl calls
//     where catching SIGPIPE starts the runtime's signal-mask thread (about
//     0.2 ms of a 4 ms admin verb, docs/PERFORMANCE.md).
//
// A descriptor that cannot be duplicated (closed) is returned as it is.
func Streams(args []string) (stdout, stderr *os.File) {
	a := ScanArgs(args)
	switch {
	case a.PrintsOnly():
		return os.Stdout, os.Stderr
	case a.RunsCommand():
		CatchSIGPIPE()
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
