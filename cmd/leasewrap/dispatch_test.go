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
		{[]string{"kube", "run", "x"}, "leasewrap-kube"},
		{[]string{"--log-level", "debug", "kube", "holder", "x"}, "leasewrap-kube"},
		{[]string{"claim", "run", "lock"}, ""},
		{[]string{"claim", "run", "kube"}, ""},
		{[]string{"--log-format", "lock", "claim"}, ""},
		{nil, ""},
	} {
		have := ""
		if k := kindNamed(cli.ScanArgs(tc.args).Kind()); k != nil && k.sibling != nil {
			have = k.sibling.exe
		}
		if have != tc.want {
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
	served, err = dispatch([]string{"kube", "run", "x", "--", "true"})
	if !served || !errors.Is(err, exec.ErrNotFound) || !strings.Contains(err.Error(), "leasewrap-kube") || !strings.Contains(err.Error(), "kube/cmd/leasewrap-kube") {
		t.Fatalf("want a not-found error naming leasewrap-kube and how to install it, have served=%v err=%v", served, err)
	}
}

// TestInstallHintOfARelease: a release names the sibling of the same
// release, in the module path `go install` resolves.
func TestInstallHintOfARelease(t *testing.T) {
	defer func(v string) { version = v }(version)
	version = "v1.4.0"
	have := installHint(kubeExe)
	if want := "go install github.com/leasewrap/leasewrap/kube/cmd/leasewrap-kube@v1.4.0"; !strings.Contains(have, want) {
		t.Errorf("want %q in the hint, have %q", want, have)
	}
	version = "v1.4.1-0.20261202003328-a2af168abcde"
	if have := installHint(etcdExe); !strings.Contains(have, "go install ./etcd/cmd/leasewrap-etcd") {
		t.Errorf("a build between releases: want the checkout's commands, have %q", have)
	}
}
