package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/kube/internal/kubetest"
)

// silentServer is a loopback listener that accepts connections and never
// answers (an API server wedged before its first byte); it closes them
// when the test ends.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	accepted := make(chan net.Conn, 64)
	go func() { // ended by closing l
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			select {
			case accepted <- c:
			default:
				c.Close()
			}
		}
	}()
	t.Cleanup(func() {
		l.Close()
		close(done)
		for {
			select {
			case c := <-accepted:
				c.Close()
			default:
				return
			}
		}
	})
	return l.Addr().String()
}

// writeExecKubeconfig writes a kubeconfig at server whose user's
// credentials come from an exec plugin running script.
func writeExecKubeconfig(t *testing.T, server, script string) string {
	t.Helper()
	plugin := filepath.Join(t.TempDir(), "cred-plugin")
	if err := os.WriteFile(plugin, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return writeKubeconfigUser(t, server, "jobs", "exec:\n  apiVersion: client.authentication.k8s.io/v1\n  command: "+plugin+"\n  interactiveMode: Never")
}

// TestUnavailableIsNotTheWaitRunningOut (issue 23.5): an API server that
// accepts connections and never answers is 69 ("did not answer"), also
// with --wait 60s — the per-request deadline is not the wait running out
// (75) — within a few request timeouts, with the reason printed under -q.
// A hanging exec credential plugin is bounded by --request-timeout and
// named (69); a failing one is named too (77); `kube holder` alike. An
// http:// address at a TLS port names the scheme mismatch (77).
func TestUnavailableIsNotTheWaitRunningOut(t *testing.T) {
	bin := kubetest.Build(t, "./cmd/leasewrap-kube")
	ran := filepath.Join(t.TempDir(), "ran")
	job := []string{"--", "touch", ran}
	silent := "https://" + silentServer(t)
	// A plugin that never returns; it leaves leasewrap's stdout and stderr
	// (which client-go hands it) so that the test waits for leasewrap
	// alone, and the test kills it at the end (leasewrap leaves it running:
	// client-go gives no handle on it).
	hang := func() string {
		pidf := filepath.Join(t.TempDir(), "plugin.pid")
		t.Cleanup(func() {
			if b, err := os.ReadFile(pidf); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
		return writeExecKubeconfig(t, silent, "echo $$ > "+pidf+"; exec sleep 60 </dev/null >/dev/null 2>&1")
	}

	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not an API server", http.StatusTeapot)
	}))
	t.Cleanup(tls.Close)
	plainAtTLS := writeKubeconfig(t, strings.Replace(tls.URL, "https://", "http://", 1), "jobs")

	for _, tc := range []struct {
		name string
		args []string
		want int
		says []string
	}{
		{"silent server, try once", append([]string{"-q", "kube", "run", "x", "--kubeconfig", writeKubeconfig(t, silent, "jobs"), "--request-timeout", "1s"}, job...),
			69, []string{"did not answer in time"}},
		{"silent server, --wait 60s", append([]string{"-q", "kube", "run", "x", "--kubeconfig", writeKubeconfig(t, silent, "jobs"), "--request-timeout", "1s", "--wait", "60s"}, job...),
			69, []string{"did not answer in time"}},
		{"silent server, holder", []string{"kube", "holder", "x", "--kubeconfig", writeKubeconfig(t, silent, "jobs"), "--request-timeout", "1s"},
			69, []string{"did not answer in time"}},
		{"hanging plugin", append([]string{"kube", "run", "x", "--kubeconfig", hang(), "--request-timeout", "1s"}, job...),
			69, []string{"exec credential plugin", "cred-plugin", "did not return"}},
		{"hanging plugin, --wait", append([]string{"kube", "run", "x", "--kubeconfig", hang(), "--request-timeout", "1s", "--wait", "60s"}, job...),
			69, []string{"cred-plugin", "did not return"}},
		{"hanging plugin, holder", []string{"kube", "holder", "x", "--kubeconfig", hang(), "--request-timeout", "1s"},
			69, []string{"cred-plugin", "did not return"}},
		{"failing plugin", append([]string{"kube", "run", "x", "--kubeconfig", writeExecKubeconfig(t, silent, "echo no token for you >&2; exit 3"), "--request-timeout", "1s"}, job...),
			77, []string{"cred-plugin", "plugin failed"}},
		{"http:// at a TLS port", append([]string{"kube", "run", "x", "--kubeconfig", plainAtTLS, "--request-timeout", "2s"}, job...),
			77, []string{"the server speaks TLS: use https://"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, out := lwRun(t, bin, 30*time.Second, tc.args...)
			if code != tc.want {
				t.Fatalf("want %d, have %d:\n%s", tc.want, code, out)
			}
			for _, s := range tc.says {
				if !strings.Contains(out, s) {
					t.Fatalf("want the message to say %q:\n%s", s, out)
				}
			}
			if _, err := os.Stat(ran); err == nil {
				t.Fatal("the command ran")
			}
			t.Logf("%d after %v", code, time.Since(start).Round(10*time.Millisecond))
		})
	}
}

// TestKubeHelpStatesItsDefaults (issue 23.4): kube run --help states the
// smallest TTL it takes and shows no fixed 10s kill grace (its default is
// a third of the TTL: 5s for the default 15s).
func TestKubeHelpStatesItsDefaults(t *testing.T) {
	bin := kubetest.Build(t, "./cmd/leasewrap-kube")
	_, out := lwRun(t, bin, 30*time.Second, "kube", "run", "--help")
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"at least 4s with the default --kill-grace and --renew-every", "2s with --kill-grace 0s", "a third of the lease's TTL, at most 10s", "5s for the default 15s", "--take-coordinated"} {
		if !strings.Contains(flat, want) {
			t.Errorf("kube run --help does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "--kill-grace=10s") {
		t.Errorf("kube run --help shows --kill-grace=10s:\n%s", out)
	}
}
