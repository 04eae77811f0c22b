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

// TestMistakesNameTheirVerb: lock and once explain a bad command line in
// their own words, and --ttl takes plain seconds as etcdctl does.
func TestMistakesNameTheirVerb(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	eps := strings.Join(c.Endpoints(), ",")
	for _, tc := range []struct {
		args []string
		want int
		says string
	}{
		{[]string{"lock", "run", "--endpoints", eps, "--", "./job.sh", "arg1"}, 64, "lock run: usage: NAME is missing"},
		{[]string{"once", "run", "--endpoints", eps, "--", "./job.sh", "arg1"}, 64, "once run: usage: KEY is missing"},
		{[]string{"lock", "run", "n", "--endpoints", eps}, 64, "e.g. leasewrap lock run NAME -- ./job.sh"},
		{[]string{"lock", "run", "--ttl", "30s", "--root", "x", "--", "true"}, 64, "lock run: unknown flag --root"},
		{[]string{"once", "run", "k", "--endpoints", eps, "--ttl", "3s", "--", "true"}, 64, "once run: usage: the default --renew-every 1s (a third of --ttl) leaves no retry"},
		{[]string{"lock", "run", "n", "--endpoints", eps, "--ttl", "5x", "--", "true"}, 64, "neither whole seconds"},
		{[]string{"lock", "run", "n", "--endpoints", eps, "--ttl", "5", "--kill-grace", "1s", "--", "sh", "-c", "echo ttl ok"}, 0, "ttl ok"},
		{[]string{"lock", "run", "n", "--endpoints", eps, "--ttl", "5s", "--kill-grace", "1s", "--", "sh", "-c", "echo ttl ok"}, 0, "ttl ok"},
	} {
		code, log := runLW(t, nil, tc.args...)
		if code != tc.want || !strings.Contains(log, tc.says) {
			t.Errorf("%v: want %d and %q, have %d:\n%s", tc.args, tc.want, tc.says, code, log)
		}
		if strings.Contains(log, "claim run") {
			t.Errorf("%v: the message names another verb:\n%s", tc.args, log)
		}
	}
}
