package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/cli"
)

// etcdExe is the executable that serves the etcd kinds (lock, once). It is
// a separate program so that the etcd client (gRPC, protobuf: about 165
// package inits) never slows the local kinds' start-up.
const etcdExe = "leasewrap-etcd"

// execEtcd replaces this process with leasewrap-etcd (same pid, same
// arguments, same environment), git-style: it looks beside leasewrap's own
// executable first, then in PATH. It returns only on failure; a missing
// leasewrap-etcd is an error matching exec.ErrNotFound (exit 127) that
// says what to install.
func execEtcd(args []string) error {
	path, err := findEtcdExe()
	if err != nil {
		return err
	}
	argv := append([]string{etcdExe}, args...)
	if err := unix.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("exec %s: %w", path, err)
	}
	return nil // not reached
}

// etcdExecError gives a failed exec of leasewrap-etcd the status a shell
// gives a command it cannot run: 127 when it is missing, 126 when it is
// there but cannot be executed (docs/ETCD.md).
func etcdExecError(err error) error {
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, unix.ENOENT):
		return &cli.ExitError{Code: cli.ExitNotFound, Err: err}
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.ENOEXEC), errors.Is(err, unix.EPERM):
		return &cli.ExitError{Code: cli.ExitNotExecutable, Err: err}
	}
	return err
}

// findEtcdExe returns leasewrap-etcd beside os.Executable(), else in PATH.
func findEtcdExe() (string, error) {
	var beside string
	if self, err := os.Executable(); err == nil {
		beside = filepath.Join(filepath.Dir(self), etcdExe)
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return beside, nil
		}
	}
	if p, err := exec.LookPath(etcdExe); err == nil {
		return p, nil
	}
	where := "in PATH"
	if beside != "" {
		where = fmt.Sprintf("at %s nor in PATH", beside)
	}
	return "", fmt.Errorf("the lock and once verbs need the %s executable, found neither %s; install it beside leasewrap (make build builds both into bin/), or go install github.com/leasewrap/leasewrap/etcd/cmd/leasewrap-etcd@latest: %w",
		etcdExe, where, exec.ErrNotFound)
}

// etcdVerb reports whether args (leasewrap's arguments, without argv[0])
// name an etcd kind (lock or once) as their first word that is not a
// global flag.
func etcdVerb(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--log-format" || a == "--log-level":
			i++
		case len(a) > 0 && a[0] == '-':
		default:
			return a == "lock" || a == "once"
		}
	}
	return false
}
