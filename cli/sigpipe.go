package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// Streams returns the standard output and error an invocation with args
// writes to: close-on-exec duplicates of fds 1 and 2, where a write to a
// reader that has gone fails with EPIPE instead of raising SIGPIPE (the Go
// runtime raises it only for fds 1 and 2 themselves). So a supervisor whose
// log write fails goes on supervising, and an admin verb that cannot answer
// exits 2. SIGPIPE is neither caught nor ignored, so the command keeps its
// default disposition. Help and the version only print and get fds 1 and 2
// themselves: like any filter they die of SIGPIPE when their reader has
// gone.
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
