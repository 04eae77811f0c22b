package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/cli"
)

func TestSiblingKinds(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lock", "run", "x"}, "leasewrap-etcd"},
		{[]string{"--log-level", "debug", "once", "run", "k"}, "leasewrap-etcd"},
		{[]string{"-q", "lock", "holders", "x"}, "leasewrap-etcd"},
		{[]string{"claim", "run", "lock"}, ""},
		{[]string{"--log-format", "lock", "claim"}, ""},
		{nil, ""},
	} {
		if have := siblings[cli.ScanArgs(tc.args).Kind()].exe; have != tc.want {
			t.Errorf("%q: want %q, have %q", tc.args, tc.want, have)
		}
	}
}

func TestSiblingMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	served, err := dispatch([]string{"lock", "run", "x", "--", "true"})
	if !served || err == nil {
		t.Fatalf("want leasewrap-etcd missing (empty PATH, none beside the test binary), have served=%v err=%v", served, err)
	}
	if !errors.Is(err, exec.ErrNotFound) || !strings.Contains(err.Error(), "leasewrap-etcd") || !strings.Contains(err.Error(), "make build") {
		t.Fatalf("want a not-found error naming leasewrap-etcd and how to install it, have %v", err)
	}
}
