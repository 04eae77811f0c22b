package pyyaml

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// PyYAML's implicit resolver expressions (resolver.py), which the
// hand-written matchers of match.go must agree with on every input.
// Python's `$` also matches before one trailing newline: `\n?\z`.
var resolverExprs = []struct {
	name  string
	re    *regexp.Regexp
	match func(string) bool
}{
	{"bool", regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)\n?\z`), matchBool},
	{"float", regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\n?\z`), matchFloat},
	{"int", regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)\n?\z`), matchInt},
	{"merge", regexp.MustCompile(`^(?:<<)\n?\z`), matchMerge},
	{"null", regexp.MustCompile(`^(?:~|null|Null|NULL|)\n?\z`), matchNull},
	{"timestamp", regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)\n?\z`), matchTime},
	{"value", regexp.MustCompile(`^(?:=)\n?\z`), matchValue},
	{"yaml", regexp.MustCompile(`^(?:!|&|\*)\n?\z`), matchYAML},
}

func checkMatchers(t *testing.T, s string) {
	t.Helper()
	for _, e := range resolverExprs {
		if want, have := e.re.MatchString(s), e.match(s); want != have {
			t.Fatalf("%s resolver on %q: want %v (the expression), have %v", e.name, s, want, have)
		}
	}
}

// Known spellings of every resolver, and near misses.
var matcherSamples = []string{
	"", "\n", "\n\n", "~", "null", "Null", "NULL", "nULL", "null\n", "null\n\n", "yes", "Yes", "YES", "yEs", "on", "OFF\n",
	"<<", "<<<", "=", "==", "!", "&", "*", "**", "!\n",
	"0", "-0", "+0", "00", "0_", "07", "08", "0o7", "0b", "0b1", "0b102", "-0b_", "0x", "0xfF_", "0xg", "1_000", "_1", "1:20", "1:60", "1:5:59",
	"1:", ":1", "190:20:30", "-1:20", "0:20", "1__", "12e3",
	"1.", ".5", "._5", ".5e+1", ".5e1", "1.5e-10", "1.5E+10", "1.e+5", "-1.0", "+.5", "1_0.0_1", "1:20.5", "1:20.", "1:2:3.4", "1:70.5",
	".inf", "-.inf", "+.Inf", ".INF", ".nan", "-.nan", ".NaN", "1.0\n", "1.0\n\n", "1.0 ", " 1.0",
	"2001-12-14", "2001-12-14\n", "2001-1-1", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5",
	"2001-12-14T21:59:43Z", "2001-12-14 \t 21:59:43.10 Z", "2001-12-14T21:59:43 ", "2001-12-14T21:59:43+5:00",
	"2001-12-14T21:59:43+05:0", "2001-12-14T21:59:43+123", "2001-12-14T1:59:43", "2001-12-14T121:59:43",
	"2001-12-14T21:5:43", "2001-12-14T21:59:43.", "20011-12-14", "2001-123-14", "2001-12-145", "2001-12-14T",
	"bench:k2", "leasewrap:vm:17443:1c66a74c", "é", "1\u00e9",
}

func TestResolverMatchersAgreeWithPyYAMLExpressions(t *testing.T) {
	for _, s := range matcherSamples {
		checkMatchers(t, s)
	}
	// Every string of up to four characters over the characters the
	// expressions care about (≈ 200 k strings, well under a second).
	const alphabet = "01579_:.-+eEbxfTZ \tn\n"
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		checkMatchers(t, prefix)
		if n == 0 {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			gen(prefix+alphabet[i:i+1], n-1)
		}
	}
	gen("", 4)
	// Timestamps with any one or two characters replaced, and their
	// prefixes.
	const tAlpha = "0129-: Tt.Z+\t"
	base := "2001-12-14T21:59:43.10+05:00"
	for i := range base {
		for j := i; j < len(base); j++ {
			for _, a := range []byte(tAlpha) {
				for _, b := range []byte(tAlpha) {
					s := []byte(base)
					s[i], s[j] = a, b
					checkMatchers(t, string(s))
					checkMatchers(t, string(s[:j]))
				}
			}
		}
	}
	// Mutations of the samples: bounded, seeded, reproducible.
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		s := []byte(matcherSamples[r.IntN(len(matcherSamples))])
		for k := r.IntN(3) + 1; k > 0; k-- {
			c := alphabet[r.IntN(len(alphabet))]
			switch p := r.IntN(len(s) + 1); r.IntN(3) {
			case 0:
				s = append(s[:p], append([]byte{c}, s[p:]...)...)
			case 1:
				if p < len(s) {
					s[p] = c
				}
			default:
				if p < len(s) {
					s = append(s[:p], s[p+1:]...)
				}
			}
		}
		checkMatchers(t, string(s))
	}
}

func FuzzResolverMatchers(f *testing.F) {
	for _, s := range matcherSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.Count(s, "") > 4096 {
			return
		}
		checkMatchers(t, s)
	})
}
