package main

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/cli"
)

// sibling is an executable that serves some kinds in leasewrap's place,
// git-style: `leasewrap KIND …` execs it in place (same pid, same
// arguments, same environment). A kind whose client is heavy (gRPC,
// protobuf, client-go) lives in its own executable, so that its package
// inits never slow the local kinds' start-up. The table of kinds (kinds.go)
// says which kinds a sibling serves.
type sibling struct {
	exe     string // the executable's name, beside leasewrap or in PATH
	install string // how to install it from a checkout, for the error when it is missing
}

// installHint says how to install s, for the error when it is missing:
// every way named is a command that works. A release names the sibling of
// the same release (the packages and tarballs carry all three
// executables; the siblings' modules are tagged with the root's version,
// docs/RELEASING.md); any other build was made from a checkout.
func installHint(s *sibling) string {
	v, ok := cli.ReadVersion(version).Release()
	if !ok {
		return s.install
	}
	kind := strings.TrimPrefix(s.exe, "leasewrap-")
	return fmt.Sprintf("the leasewrap packages and release tarballs carry it; or go install github.com/leasewrap/leasewrap/%s/cmd/%s@%s", kind, s.exe, v)
}

// dispatch replaces this process with the sibling that serves args' kind,
// if one does. It returns false when leasewrap serves the kind itself, and
// an error only when the exec failed.
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
