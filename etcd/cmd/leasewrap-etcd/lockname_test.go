package main

import (
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
)

// TestLockNamesCoveringOnceRecordsAreRefused (issue 17): `lock run
// leasewrap` queued behind the durable records `once` keeps under
// leasewrap/once/ (75 for ever; with --wait, until it ran out). A lock name
// whose range holds once's default prefix is now usage (64) naming the
// collision; a name beside it locks as before.
func TestLockNamesCoveringOnceRecordsAreRefused(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	if code, out := runLW(t, nil, onceArgs("published", c.Endpoints(), nil, "true")...); code != 0 {
		t.Fatalf("once run: %d %s", code, out)
	}
	for _, name := range []string{"leasewrap", "leasewrap/once"} {
		code, out := runLW(t, nil, lockArgs(name, c.Endpoints(), []string{"--wait", "2s"}, "true")...)
		t.Logf("RESULT lock run %s | exit %d | %s", name, code, firstLineOf(out))
		if code != 64 || !strings.Contains(out, "leasewrap/once/") {
			t.Fatalf("lock run %s: want 64 naming once's prefix, have %d:\n%s", name, code, out)
		}
	}
	for _, name := range []string{"leasewrap-nightly", "leasewrap/once/x", "leasewrap/locks/nightly"} {
		if code, out := runLW(t, nil, lockArgs(name, c.Endpoints(), nil, "true")...); code != 0 {
			t.Fatalf("lock run %s: want 0, have %d:\n%s", name, code, out)
		}
	}
}
