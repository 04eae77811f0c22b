package claim

import (
	"regexp"
	"testing"
)

// shellSafe is the loop form of the regexp it replaced; they agree on
// every byte and on the empty string, and shellQuote's output is a
// single shell word either way.
func TestShellSafeMatchesItsRegexp(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)
	cases := []string{"", "build:nightly", "a b", "it's", "x\ny", "ünï", "/srv/jobs", "-rf", "$HOME", "a*b", "~x", "k%3A"}
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"b")
	}
	for _, s := range cases {
		if got, want := shellSafe(s), re.MatchString(s); got != want {
			t.Errorf("shellSafe(%q) = %v, the regexp says %v", s, got, want)
		}
	}
	if got := shellQuote("it's here"); got != `'it'\''s here'` {
		t.Errorf("shellQuote = %s", got)
	}
	if got := shellQuote("node:db"); got != "node:db" {
		t.Errorf("shellQuote = %s", got)
	}
}
