package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/cli"
)

// TestMissingEtcdExeIs127: lock and once without leasewrap-etcd exit 127
// (as docs/ETCD.md says), with a line saying what to install, in the
// log format asked for.
func TestMissingEtcdExeIs127(t *testing.T) {
	for _, args := range [][]string{
		{"lock", "run", "x", "--", "true"},
		{"--log-format", "json", "once", "run", "k", "--", "true"},
	} {
		cmd := leasewrapCmd(t, args...)
		cmd.Env = append(cmd.Env, "PATH="+t.TempDir()) // none beside the test binary either
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitNotFound {
			t.Fatalf("%v: want exit %d, have %v\n%s", args, cli.ExitNotFound, err, out)
		}
		if !strings.Contains(string(out), "leasewrap-etcd") {
			t.Fatalf("%v: want the message to name leasewrap-etcd, have %s", args, out)
		}
		if args[0] == "--log-format" && !strings.HasPrefix(string(out), "{") {
			t.Fatalf("want a JSON line, have %s", out)
		}
	}
}
