package main

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/cli"
)

// sibling is an executable that serves some kinds git-style: `leasewrap
// KIND …` execs it in place. Heavy clients (gRPC, client-go) live there so
// their inits never slow the local kinds' start-up.
type sibling struct {
	exe     string // the executable's name, beside leasewrap or in PATH
	install string // how to install it from a checkout, for the error when it is missing
}

// installHint says how to install a missing s: a release names the
// sibling of the same release (docs/RELEASING.md), other builds a checkout.
func installHint(s *sibling) string {
	v, ok := cli.ReadVersion(version).Release()
	if !ok {
		return s.install
	}
	kind := strings.TrimPrefix(s.exe, "leasewrap-")
	return fmt.Sprintf("the leasewrap packages and release tarballs carry it; or go install github.com/leasewrap/leasewrap/%s/cmd/%s@%s", kind, s.exe, v)
}

// dispatch execs the sibling that serves args' kind, if any: false when
// leasewrap serves it itself, an error only when the exec failed.
func dispatch(args []string) (bool, error) {
	kind := cli.ScanArgs(args).Kind()
	k := kindNamed(kind)
	if k == nil || k.sibling == nil {
		return false, nil
	}
	s := k.sibling
	path, err := cli.FindExecutable(s.exe, fmt.Sprintf("the %s verbs", kind), func() string { return installHint(s) })
	if err != nil {
		return true, err
	}
	argv := append([]string{s.exe}, args...)
	if err := unix.Exec(path, argv, os.Environ()); err != nil {
		return true, fmt.Errorf("exec %s: %w", path, err)
	}
	return true, nil // not reached
}
