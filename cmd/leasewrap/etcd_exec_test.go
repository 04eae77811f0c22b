package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/internal/cli"
)

func TestEtcdVerb(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"lock", "run", "x"}, true},
		{[]string{"--log-level", "debug", "once", "run", "k"}, true},
		{[]string{"-q", "lock", "holders", "x"}, true},
		{[]string{"claim", "run", "lock"}, false},
		{[]string{"--log-format", "lock", "claim"}, false},
		{nil, false},
	} {
		if have := etcdVerb(tc.args); have != tc.want {
			t.Errorf("etcdVerb(%q): want %v, have %v", tc.args, tc.want, have)
		}
	}
}

func TestExecEtcdMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	p, err := findEtcdExe()
	if err == nil {
		t.Fatalf("want leasewrap-etcd missing (empty PATH, none beside the test binary), have %s", p)
	}
	if !errors.Is(err, exec.ErrNotFound) || !strings.Contains(err.Error(), "leasewrap-etcd") || !strings.Contains(err.Error(), "make build") {
		t.Fatalf("want a not-found error naming leasewrap-etcd and how to install it, have %v", err)
	}
}

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
