package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsageErrors: command lines refused before anything connects (the
// kubeconfig points at a closed port, so a connection would be 69, not
// 64): run verbs 64, the holder verb 2.
func TestUsageErrors(t *testing.T) {
	kc := writeKubeconfig(t, "https://127.0.0.1:1", "")
	ran := filepath.Join(t.TempDir(), "ran")
	cmd := []string{"--", "touch", ran}
	for _, tc := range []struct {
		name string
		args []string
		want int
		says string
	}{
		{"name not a DNS subdomain", append([]string{"kube", "run", "Nightly_Report"}, cmd...), 64, "DNS subdomain"},
		{"name with a slash", append([]string{"kube", "run", "a/b"}, cmd...), 64, "DNS subdomain"},
		{"bad namespace", append([]string{"kube", "run", "x", "--namespace", "Jobs"}, cmd...), 64, "namespace"},
		{"ttl not whole seconds", append([]string{"kube", "run", "x", "--ttl", "1500ms"}, cmd...), 64, "whole number of seconds"},
		{"ttl below a second", append([]string{"kube", "run", "x", "--ttl", "0s"}, cmd...), 64, "at least 2s"},
		{"ttl of a second", append([]string{"kube", "run", "x", "--ttl", "1s", "--kill-grace", "0s"}, cmd...), 64, "at least 2s"},
		{"kill grace as long as the ttl", append([]string{"kube", "run", "x", "--kill-grace", "15s"}, cmd...), 64, "--kill-grace 15s"},
		{"leasewrap's 10 s kill grace leaves no retry", append([]string{"kube", "run", "x", "--kill-grace", "10s"}, cmd...), 64, "no retry"},
		{"renew period too long", append([]string{"kube", "run", "x", "--renew-every", "12s"}, cmd...), 64, "--renew-every 12s leaves no retry"},
		{"no command", []string{"kube", "run", "x"}, 64, "no command"},
		{"negative skew", append([]string{"kube", "run", "x", "--skew", "-1s"}, cmd...), 64, "--skew"},
		{"zero request timeout", append([]string{"kube", "run", "x", "--request-timeout", "0s"}, cmd...), 64, "--request-timeout"},
		{"holder: bad name", []string{"kube", "holder", "UPPER"}, 2, "DNS subdomain"},
		{"no slot", append([]string{"kube", "run", "x", "--slots", "0"}, cmd...), 64, "--slots 0"},
		{"last slot's name too long", append([]string{"kube", "run", strings.Repeat("a", 253), "--slots", "2"}, cmd...), 64, "the last slot's Lease"},
		{"holder: no slot", []string{"kube", "holder", "x", "--slots", "0"}, 2, "--slots 0"},
		{"holder: unknown flag", []string{"kube", "holder", "x", "--bogus"}, 2, "bogus"},
		{"missing kubeconfig", append([]string{"kube", "run", "x", "--kubeconfig", filepath.Join(t.TempDir(), "none")}, cmd...), 64, "kubeconfig"},
		{"unknown context", append([]string{"kube", "run", "x", "--context", "nope"}, cmd...), 64, "nope"},
		{"holder: missing kubeconfig", []string{"kube", "holder", "x", "--kubeconfig", filepath.Join(t.TempDir(), "none")}, 2, "kubeconfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", kc)
			var out, errb bytes.Buffer
			if have := realMain(tc.args, &out, &errb); have != tc.want {
				t.Fatalf("want exit %d, have %d:\n%s", tc.want, have, errb.String())
			}
			if !strings.Contains(errb.String(), tc.says) {
				t.Fatalf("want the error to say %q, have:\n%s", tc.says, errb.String())
			}
			if _, err := os.Stat(ran); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("the command ran")
			}
		})
	}
}

// TestDefaultsAccepted: the kind's defaults (15 s lease, kill grace a
// third of it, TTL/3 renewals) pass the timing check that leasewrap's
// 10 s kill grace fails.
func TestDefaultsAccepted(t *testing.T) {
	c := &runCmd{}
	c.Name, c.RequestTimeout, c.Skew, c.TTL = "x", 5e9, 5e9, 15e9
	c.ConflictExitCode = 75
	c.Command = []string{"--", "true"}
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
	if c.KillGrace != 5e9 {
		t.Fatalf("want the kill grace 5s (a third of 15s) without --kill-grace, have %v", c.KillGrace)
	}
}

func TestDefaultIdentity(t *testing.T) {
	host := func() (string, error) { return "node-7", nil }
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	a := defaultIdentity(env(nil), host)
	b := defaultIdentity(env(nil), host)
	if !strings.HasPrefix(a, "node-7_") || len(a) != len("node-7_")+8 {
		t.Fatalf("want node-7_ and 8 hex digits, have %q", a)
	}
	if a == b {
		t.Fatalf("two runs got the same identity %q", a)
	}
	if p := defaultIdentity(env(map[string]string{"POD_NAME": "web-5d8f-abcde"}), host); !strings.HasPrefix(p, "web-5d8f-abcde_") {
		t.Fatalf("want $POD_NAME first, have %q", p)
	}
	if n := defaultIdentity(env(nil), func() (string, error) { return "", errors.New("no") }); !strings.HasPrefix(n, "leasewrap_") {
		t.Fatalf("want a fallback name without a host name, have %q", n)
	}
}

// TestNamespaceDefaults: --namespace, else the kubeconfig context's, else
// "default" (outside a pod; in one, client-go reads the service account's
// namespace, as kubectl does).
func TestNamespaceDefaults(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a pod
	withNS := writeKubeconfig(t, "https://127.0.0.1:1", "jobs")
	without := writeKubeconfig(t, "https://127.0.0.1:1", "")
	for _, tc := range []struct {
		name       string
		kubeconfig string
		env        string
		flag       string
		want       string
	}{
		{"the context's", withNS, "", "", "jobs"},
		{"--namespace wins", withNS, "", "batch", "batch"},
		{"none: default", without, "", "", "default"},
		{"$KUBECONFIG", "", withNS, "", "jobs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.env)
			f := objectFlags{Name: "x", Kubeconfig: tc.kubeconfig, Namespace: tc.flag, RequestTimeout: 5e9}
			_, ns, err := f.connect()
			if err != nil {
				t.Fatal(err)
			}
			if ns != tc.want {
				t.Fatalf("want namespace %q, have %q", tc.want, ns)
			}
		})
	}
}

// writeKubeconfig writes a kubeconfig with one cluster at server, a token
// user and a current context in namespace ns ("" for none).
func writeKubeconfig(t *testing.T, server, ns string) string {
	return writeKubeconfigUser(t, server, ns, "token: t")
}

// writeKubeconfigUser is writeKubeconfig with the user's YAML (indented
// under user:, one level) given.
func writeKubeconfigUser(t *testing.T, server, ns, user string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	nsLine := ""
	if ns != "" {
		nsLine = "\n    namespace: " + ns
	}
	body := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: ` + server + `
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    ` + strings.ReplaceAll(user, "\n", "\n    ") + `
contexts:
- name: ctx
  context:
    cluster: c
    user: u` + nsLine + `
current-context: ctx
`
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHTTP2HealthEnv: the health check's variables are set while the
// client is built, a value the user set is kept, and nothing is left in
// the environment the child inherits.
func TestHTTP2HealthEnv(t *testing.T) {
	t.Setenv("HTTP2_PING_TIMEOUT_SECONDS", "7")
	os.Unsetenv("HTTP2_READ_IDLE_TIMEOUT_SECONDS")
	restore := http2Health()
	if v := os.Getenv("HTTP2_READ_IDLE_TIMEOUT_SECONDS"); v != "3" {
		t.Fatalf("want the read idle timeout 3 while the client is built, have %q", v)
	}
	if v := os.Getenv("HTTP2_PING_TIMEOUT_SECONDS"); v != "7" {
		t.Fatalf("want the user's ping timeout kept, have %q", v)
	}
	restore()
	if _, ok := os.LookupEnv("HTTP2_READ_IDLE_TIMEOUT_SECONDS"); ok {
		t.Fatal("the read idle timeout was left in the environment")
	}
	if v := os.Getenv("HTTP2_PING_TIMEOUT_SECONDS"); v != "7" {
		t.Fatalf("the user's ping timeout was changed: %q", v)
	}
}
