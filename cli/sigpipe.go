package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// Streams returns close-on-exec duplicates of fds 1 and 2, where a write to
// a gone reader fails with EPIPE instead of raising SIGPIPE (Go raises it only
// on fds 1 and 2). Help and --version, which only print, get fds 1 and 2.
func Streams(args []string) (stdout, stderr *os.File) {
	if ScanArgs(args).PrintsOnly() {
		return os.Stdout, os.Stderr
	}
	return dupStream(os.Stdout), dupStream(os.Stderr)
}

// dupStream returns a close-on-exec duplicate of f, or f itself.
func dupStream(f *os.File) *os.File {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return f
	}
	return os.NewFile(uintptr(fd), f.Name())
}
