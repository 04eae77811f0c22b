package cli

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// Streams: admin and run verbs write through close-on-exec duplicates of
// fds 1 and 2 (EPIPE, not SIGPIPE, when the reader is gone); help and the
// version use fds 1 and 2 themselves.
func TestStreams(t *testing.T) {
	for _, tc := range []struct {
		args []string
		dup  bool
	}{
		{[]string{"claim", "status", "k"}, true},
		{[]string{"reserve", "hash", "k"}, true},
		{[]string{"--log-level", "debug", "session", "owners", "sid"}, true},
		{[]string{"--version"}, false},
		{[]string{"claim", "run", "--help"}, false},
		{[]string{"claim", "run", "k", "--", "true"}, true},
		{[]string{"session", "maintain", "sid", "--", "true"}, true},
		{[]string{"lock", "run", "--endpoints", "http://127.0.0.1:1", "x", "--", "true"}, true},
	} {
		out, errw := Streams(tc.args)
		for _, f := range []struct {
			got, std *os.File
		}{{out, os.Stdout}, {errw, os.Stderr}} {
			if !tc.dup {
				if f.got != f.std {
					t.Errorf("%q: %s is not the process's own", tc.args, f.got.Name())
				}
				continue
			}
			if f.got.Fd() < 3 || f.got.Name() != f.std.Name() {
				t.Errorf("%q: %s is fd %d, want a duplicate above 2 named as %s", tc.args, f.got.Name(), f.got.Fd(), f.std.Name())
			}
			if flags, err := unix.FcntlInt(f.got.Fd(), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
				t.Errorf("%q: the duplicate of %s is not close-on-exec (%v)", tc.args, f.std.Name(), err)
			}
			f.got.Close()
		}
	}
}
