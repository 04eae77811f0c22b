package main

import (
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
)

// TestBadFlagsAreUsage (issue 17): every path and number flag of
// leasewrap-etcd that cannot work is usage, found before anything is
// dialed or run: 64 for the run verbs, 2 for the admin verbs (their
// contract).
func TestBadFlagsAreUsage(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	ep := c.Endpoints()
	for _, tc := range []struct {
		flags []string
		text  string
	}{
		{[]string{"--ttl", "9223372036s"}, "9000000000"},
		{[]string{"--ttl", "9000000001s"}, "9000000000"},
		{[]string{"--cacert", "/nonexistent/ca.pem"}, "/nonexistent/ca.pem"},
		{[]string{"--cert", "/nonexistent/c.pem", "--key", "/nonexistent/k.pem"}, "/nonexistent/c.pem"},
		{[]string{"--password-file", "/nonexistent/pw", "--user", "u"}, "/nonexistent/pw"},
		{[]string{"--max-request-bytes", "0"}, "--max-request-bytes"},
	} {
		verbs := [][]string{lockArgs("x", ep, tc.flags, "true"), onceArgs("x", ep, tc.flags, "true")}
		if tc.flags[0] == "--max-request-bytes" {
			verbs = verbs[1:] // once run's own flag
		}
		for _, args := range verbs {
			code, out := runLW(t, nil, args...)
			t.Logf("RESULT %s %v | exit %d | %s", args[0], tc.flags, code, firstLineOf(out))
			if code != 64 || !strings.Contains(out, tc.text) {
				t.Errorf("%s run %v: want 64 naming %s, have %d:\n%s", args[0], tc.flags, tc.text, code, out)
			}
		}
		if tc.flags[0] == "--ttl" || tc.flags[0] == "--max-request-bytes" {
			continue // run verbs' flags
		}
		for _, args := range [][]string{
			append([]string{"lock", "holders", "x", "--endpoints", ep[0]}, tc.flags...),
			append([]string{"once", "lookup", "x", "--endpoints", ep[0]}, tc.flags...),
		} {
			code, out := runLW(t, nil, args...)
			t.Logf("RESULT %s %s %v | exit %d | %s", args[0], args[1], tc.flags, code, firstLineOf(out))
			if code != 2 || !strings.Contains(out, tc.text) {
				t.Errorf("%v: want 2 (admin usage) naming %s, have %d:\n%s", args[:2], tc.text, code, out)
			}
		}
	}
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
