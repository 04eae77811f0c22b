package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// TestTimingDefaultsCompose (issue 23.4): a TTL the protocol accepts never
// fails because of another flag's default — the kill grace and renewal
// period the user did not set scale with --ttl — and the refusals left are
// true: each names the values as given (a default as a default), offers
// renewing more often only where that can help, and every value it
// suggests is then accepted (the run goes through against a real etcd).
func TestTimingDefaultsCompose(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	eps := c.Endpoints()
	for i, tc := range []struct {
		verb  string
		flags []string
		want  int
		says  string // in a refusal
	}{
		{"lock", []string{"--ttl", "5s"}, 0, ""},
		{"lock", []string{"--ttl", "10"}, 0, ""}, // etcdctl lock's default
		{"once", []string{"--ttl", "5s"}, 0, ""},
		{"lock", []string{"--ttl", "4"}, 0, ""}, // the least with the defaults (--help)
		{"lock", []string{"--ttl", "2", "--kill-grace", "0s"}, 0, ""},
		{"lock", []string{"--ttl", "30"}, 0, ""},
		{"lock", []string{"--ttl", "3"}, 64, "the default --renew-every 1s"},
		{"once", []string{"--ttl", "3s"}, 64, "the default --kill-grace 1s"},
		{"lock", []string{"--ttl", "1"}, 64, "from 2"},
		{"lock", []string{"--ttl", "2", "--kill-grace", "1s"}, 64, "use up all of --ttl 2s"},
		{"lock", []string{"--ttl", "5s", "--kill-grace", "10s"}, 64, "--kill-grace 10s must be shorter than --ttl 5s"},
		{"lock", []string{"--ttl", "15", "--kill-grace", "10s"}, 64, "leaves no retry"},
		{"once", []string{"--ttl", "6", "--renew-every", "5s"}, 64, "--renew-every 5s leaves no retry"},
		{"lock", []string{"--ttl", "3", "--kill-grace", "0s", "--renew-every", "2500ms"}, 64, "--kill-grace 0s"},
	} {
		key := fmt.Sprintf("timing-%d", i)
		args := append([]string{tc.verb, "run", key, "--endpoints", strings.Join(eps, ",")}, tc.flags...)
		args = append(args, "--", "true")
		code, out := runLW(t, nil, args...)
		if code != tc.want || tc.want == 64 && !strings.Contains(out, tc.says) {
			t.Errorf("%v: want %d and %q, have %d:\n%s", tc.flags, tc.want, tc.says, code, out)
			continue
		}
		if code != 64 {
			continue
		}
		if strings.Contains(out, "--kill-grace") && strings.Contains(strings.Join(tc.flags, " "), "--kill-grace") && strings.Contains(out, "the default --kill-grace") {
			t.Errorf("%v: the message calls the given --kill-grace a default:\n%s", tc.flags, out)
		}
		if strings.Contains(out, "use up all") && strings.Contains(out, "--renew-every") {
			t.Errorf("%v: advises renewing more often where that cannot help:\n%s", tc.flags, out)
		}
		fixes := testutil.Suggested(out, args)
		if len(fixes) == 0 && !strings.Contains(out, "from 2") {
			t.Errorf("%v: a refusal without an accepted alternative:\n%s", tc.flags, out)
		}
		for j, fixed := range fixes {
			fixed[2] = fmt.Sprintf("%s-fix%d", key, j)
			if code, out := runLW(t, nil, fixed...); code != 0 {
				t.Errorf("%v: the suggested %v is refused again (%d):\n%s", tc.flags, fixed[5:], code, out)
			}
		}
	}
}

// TestHelpStatesTheSmallestTTL: lock run and once run say in --help which
// TTL is the least they take, and it is (TestTimingDefaultsCompose runs it).
func TestHelpStatesTheSmallestTTL(t *testing.T) {
	for _, verb := range []string{"lock", "once"} {
		_, out := runLW(t, nil, verb, "run", "--help")
		if !strings.Contains(strings.Join(strings.Fields(out), " "), "At least 4 with the default --kill-grace and --renew-every, 2 with --kill-grace 0s") {
			t.Errorf("%s run --help does not state the smallest TTL:\n%s", verb, out)
		}
		if strings.Contains(out, "--kill-grace=10s") {
			t.Errorf("%s run --help shows a fixed 10s kill grace:\n%s", verb, out)
		}
	}
}
