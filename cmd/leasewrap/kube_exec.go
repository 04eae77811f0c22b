package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// kubeExe is the executable that serves the kube kind. It is a separate
// program, in its own module, so that client-go never slows the local
// kinds' start-up nor enters the root module's dependencies.
const kubeExe = "leasewrap-kube"

// execKube replaces this process with leasewrap-kube (same pid, same
// arguments, same environment), as execEtcd does for leasewrap-etcd. It
// returns only on failure; a missing leasewrap-kube is an error matching
// exec.ErrNotFound (exit 127) that says what to install.
func execKube(args []string) error {
	path, err := findKubeExe()
	if err != nil {
		return err
	}
	argv := append([]string{kubeExe}, args...)
	if err := unix.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("exec %s: %w", path, err)
	}
	return nil // not reached
}

// findKubeExe returns leasewrap-kube beside os.Executable(), else in PATH.
func findKubeExe() (string, error) {
	var beside string
	if self, err := os.Executable(); err == nil {
		beside = filepath.Join(filepath.Dir(self), kubeExe)
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return beside, nil
		}
	}
	if p, err := exec.LookPath(kubeExe); err == nil {
		return p, nil
	}
	where := "in PATH"
	if beside != "" {
		where = fmt.Sprintf("at %s nor in PATH", beside)
	}
	return "", fmt.Errorf("the kube verbs need the %s executable, found neither %s; install it beside leasewrap (make build builds it into bin/), or go install github.com/leasewrap/leasewrap/kube/cmd/leasewrap-kube@latest: %w",
		kubeExe, where, exec.ErrNotFound)
}

// kubeVerb reports whether args (leasewrap's arguments, without argv[0])
// name the kube kind as their first word that is not a global flag.
func kubeVerb(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--log-format" || a == "--log-level":
			i++
		case len(a) > 0 && a[0] == '-':
		default:
			return a == "kube"
		}
	}
	return false
}
