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
