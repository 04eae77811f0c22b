package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
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
