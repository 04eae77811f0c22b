package cli

import (
	"strings"
	"testing"
)

func TestHelpArgs(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"help"}, []string{"--help"}},
		{[]string{"help", "claim", "run"}, []string{"claim", "run", "--help"}},
		{[]string{"--log-level", "debug", "help", "kube"}, []string{"--log-level", "debug", "kube", "--help"}},
		{[]string{"help", "flock", "run", "--", "x"}, []string{"flock", "run", "--help", "--", "x"}},
		{[]string{"claim", "run", "help", "--", "true"}, []string{"claim", "run", "help", "--", "true"}},
		{[]string{"--log-format", "help", "claim"}, []string{"--log-format", "help", "claim"}},
		{nil, nil},
	} {
		if have := HelpArgs(tc.in); strings.Join(have, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%q: want %q, have %q", tc.in, tc.want, have)
		}
	}
}
