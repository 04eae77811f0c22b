package pyyaml

import (
	"math"
	"testing"
)

func TestPyFloatRepr(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{1e16, "1.0e+16"}, {1e15, "1000000000000000.0"}, {0.0001, "0.0001"}, {1e-05, "1.0e-05"},
		{123.456, "123.456"}, {math.Copysign(0, -1), "-0.0"}, {2.5e-310, "2.5e-310"}, {1.5e300, "1.5e+300"},
	} {
		if have := pyFloatRepr(tc.in); have != tc.want {
			t.Errorf("%v: want %q, have %q", tc.in, tc.want, have)
		}
	}
}

// pyyamlTags are the tags PyYAML 6.0.3's Resolver gives plain scalars
// (resolve(ScalarNode, s, (True, False))): known spellings of every
// resolver, and near misses.
var pyyamlTags = map[string][]string{
	"str": {"\n", "\n\n", "nULL", "null\n\n", "yEs", "<<<", "==", "**", "08", "0o7", "0b", "0b102", "0x", "0xg",
		"_1", "1:60", "1:", ":1", "0:20", "12e3", "._5", ".5e1", "+.5", "1:70.5", "-.nan", "1.0\n\n", "1.0 ",
		" 1.0", "2001-1-1", "2001-12-14T21:59:43 ", "2001-12-14T21:59:43+05:0", "2001-12-14T21:59:43+123",
		"2001-12-14T121:59:43", "2001-12-14T21:5:43", "20011-12-14", "2001-123-14", "2001-12-145", "2001-12-14T",
		"bench:k2", "leasewrap:vm:17443:1c66a74c", "é", "1é"},
	"bool": {"yes", "Yes", "YES", "on", "OFF\n"},
	"int": {"0", "-0", "+0", "00", "0_", "07", "0b1", "-0b_", "0xfF_", "1_000", "1:20", "1:5:59", "190:20:30",
		"-1:20", "1__"},
	"float": {"1.", ".5", ".5e+1", "1.5e-10", "1.5E+10", "1.e+5", "-1.0", "1_0.0_1", "1:20.5", "1:20.",
		"1:2:3.4", ".inf", "-.inf", "+.Inf", ".INF", ".nan", ".NaN", "1.0\n"},
	"null": {"", "~", "null", "Null", "NULL", "null\n"},
	"timestamp": {"2001-12-14", "2001-12-14\n", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5",
		"2001-12-14T21:59:43Z", "2001-12-14 \t 21:59:43.10 Z", "2001-12-14T21:59:43+5:00", "2001-12-14T1:59:43",
		"2001-12-14T21:59:43."},
	"merge": {"<<"},
	"value": {"="},
	"yaml":  {"!", "&", "*", "!\n"},
}

func TestResolvePlainAsPyYAML(t *testing.T) {
	for tag, samples := range pyyamlTags {
		for _, s := range samples {
			if have := resolvePlain(s); have != tag {
				t.Errorf("%q: want %s, have %s", s, tag, have)
			}
		}
	}
}
