package testutil

import (
	"os"
	"syscall"
)

// Plants are what an attacker leaves at a name leasewrap is about to open,
// by kind: a symlink to victim, a hard link to victim, a FIFO. Each makes
// its plant at at and returns the error of making it.
func Plants() map[string]func(victim, at string) error {
	return map[string]func(victim, at string) error{
		"symlink":  func(v, at string) error { return os.Symlink(v, at) },
		"hardlink": func(v, at string) error { return os.Link(v, at) },
		"fifo":     func(_, at string) error { return syscall.Mkfifo(at, 0o666) },
	}
}
