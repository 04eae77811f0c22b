package testutil

import (
	"testing"
	"time"
)

// Scale multiplies by LEASEWRAP_TEST_SCALE (a bad or non-positive one
// counts as 1) and by at most 10 for the load.
func TestScaleByTheFactorAndTheLoad(t *testing.T) {
	for _, tc := range []struct {
		env    string
		lo, hi time.Duration
	}{
		{"", time.Second, 10 * time.Second},
		{"3", 3 * time.Second, 30 * time.Second},
		{"0.5", time.Second / 2, 5 * time.Second},
		{"x", time.Second, 10 * time.Second},
		{"-2", time.Second, 10 * time.Second},
		{"+Inf", time.Second, 10 * time.Second},
	} {
		t.Setenv(ScaleEnv, tc.env)
		if have := Scale(time.Second); have < tc.lo || have > tc.hi {
			t.Errorf("%s=%q: want Scale(1s) in [%v, %v], have %v", ScaleEnv, tc.env, tc.lo, tc.hi, have)
		}
	}
}
