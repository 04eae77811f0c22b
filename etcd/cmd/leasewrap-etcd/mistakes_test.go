package main

import (
	"os"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
)

// TestTLSSchemeMismatch: an https:// endpoint at a plain server, or a
// plain one at a TLS server, is 77 with a hint about the scheme, not 69
// "did not answer"; nothing runs.
func TestTLSSchemeMismatch(t *testing.T) {
	plain := etcdtest.Start(t, etcdtest.Options{})
	certs := etcdtest.GenerateTLS(t)
	secure := etcdtest.Start(t, etcdtest.Options{TLS: certs})
	for _, tc := range []struct {
		name string
		ep   string
		want string
	}{
		{"https at a plain server", strings.Replace(plain.Endpoints()[0], "http://", "https://", 1), "plain"},
		{"http at a TLS server", strings.Replace(secure.Endpoints()[0], "https://", "http://", 1), "https://"},
		{"bare host:port at a TLS server", strings.TrimPrefix(secure.Endpoints()[0], "https://"), "https://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := tmp(t, "ran")
			code, log := runLW(t, nil, lockArgs("mismatch", []string{tc.ep}, []string{"--dial-timeout", "1s"}, "touch", ran)...)
			if code != 77 || !strings.Contains(log, tc.want) {
				t.Fatalf("want 77 and a hint naming %q, have %d:\n%s", tc.want, code, log)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Fatal("the command ran")
			}
		})
	}
}
