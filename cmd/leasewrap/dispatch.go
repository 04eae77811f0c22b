package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/cli"
)

// sibling is an executable that serves some kinds in leasewrap's place,
// git-style: `leasewrap KIND …` execs it in place (same pid, same
// arguments, same environment). A kind whose client is heavy (gRPC,
// protobuf, client-go) lives in its own executable, so that its package
// inits never slow the local kinds' start-up.
type sibling struct {
	exe string // the executable's name, beside leasewrap or in PATH
	dir string // its main package's directory in this tree (and module)
}

// siblings are the kinds served by another executable, by first word.
// Adding a kind's executable is one line here.
var siblings = map[string]sibling{
	"lock": {"leasewrap-etcd", "etcd/cmd/leasewrap-etcd"},
	"once": {"leasewrap-etcd", "etcd/cmd/leasewrap-etcd"},
	"kube": {"leasewrap-kube", "kube/cmd/leasewrap-kube"},
}

// install says how to install s, for the error when it is missing: every
// way named is a command that works. A release installs the sibling of
// the same release (the packages and tarballs carry all three
// executables); any other build was made from a checkout, where make
// builds all three.
func (s sibling) install() string {
	if v, ok := cli.ReadVersion(version).Release(); ok {
		return fmt.Sprintf("the leasewrap package and release tarball carry it; or go install github.com/leasewrap/leasewrap/%s@%s", s.dir, v)
	}
	return fmt.Sprintf("in a checkout of leasewrap, make build builds it into bin/, or go install ./%s", s.dir)
}

// dispatch replaces this process with the sibling that serves args' kind,
// if one does. It returns false when leasewrap serves the kind itself, and
// an error only when the exec failed.
func dispatch(args []string) (bool, error) {
	kind := cli.ScanArgs(args).Kind()
	s, ok := siblings[kind]
	if !ok {
		return false, nil
	}
	path, err := cli.FindExecutable(s.exe, fmt.Sprintf("the %s verbs", kind), s.install())
	if err != nil {
		return true, err
	}
	argv := append([]string{s.exe}, args...)
	if err := unix.Exec(path, argv, os.Environ()); err != nil {
		return true, fmt.Errorf("exec %s: %w", path, err)
	}
	return true, nil // not reached
}
