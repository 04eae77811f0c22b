package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Beside is the executable name in this executable's directory, or "" if
// there is no such regular executable file.
func Beside(name string) string {
	self, err := os.Executable()
	if err != nil {
		return ""
	}
	p := filepath.Join(filepath.Dir(self), name)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return ""
	}
	return p
}

// FindExecutable returns the executable name beside this one, else in
// PATH. Missing, the error matches exec.ErrNotFound (exit 127) and says
// what needs it and how to install it (install is called only then).
func FindExecutable(name, what string, install func() string) (string, error) {
	if p := Beside(name); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	where := "in PATH"
	if self, err := os.Executable(); err == nil {
		where = fmt.Sprintf("at %s nor in PATH", filepath.Join(filepath.Dir(self), name))
	}
	return "", fmt.Errorf("%s need the %s executable, found neither %s; install it beside leasewrap (%s): %w",
		what, name, where, install(), exec.ErrNotFound)
}
