package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

func TestKubeVerb(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"kube", "run", "x"}, true},
		{[]string{"--log-level", "debug", "kube", "holder", "x"}, true},
		{[]string{"-q", "kube", "run", "x"}, true},
		{[]string{"claim", "run", "kube"}, false},
		{[]string{"--log-format", "kube", "claim"}, false},
		{[]string{"lock", "run", "kube"}, false},
		{nil, false},
	} {
		if have := kubeVerb(tc.args); have != tc.want {
			t.Errorf("kubeVerb(%q): want %v, have %v", tc.args, tc.want, have)
		}
	}
}

func TestExecKubeMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	p, err := findKubeExe()
	if err == nil {
		t.Fatalf("want leasewrap-kube missing (empty PATH, none beside the test binary), have %s", p)
	}
	if !errors.Is(err, exec.ErrNotFound) || !strings.Contains(err.Error(), "leasewrap-kube") || !strings.Contains(err.Error(), "make build") {
		t.Fatalf("want a not-found error naming leasewrap-kube and how to install it, have %v", err)
	}
}
