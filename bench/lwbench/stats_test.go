package main

import (
	"math"
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	s := sample{4, 1, 3, 2, 5}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0, 1}, {0.5, 3}, {1, 5}, {0.25, 2}, {0.75, 4}} {
		if have := s.quantile(tc.q); have != tc.want {
			t.Errorf("quantile(%v): want %v, have %v", tc.q, tc.want, have)
		}
	}
	if have := (sample{10, 20}).median(); have != 15 {
		t.Errorf("median of two: want 15, have %v", have)
	}
	if have := (sample{}).median(); have != 0 {
		t.Errorf("median of none: want 0, have %v", have)
	}
}

func TestRatios(t *testing.T) {
	r := ratios(sample{2, 9, 4}, sample{1, 3, 0})
	if len(r) != 2 || r[0] != 2 || r[1] != 3 {
		t.Fatalf("want [2 3] (zero denominator skipped), have %v", r)
	}
	if have := medianF([]float64{1, 3, 2, 10}); have != 2.5 {
		t.Errorf("medianF: want 2.5, have %v", have)
	}
	if !math.IsNaN(medianF(nil)) {
		t.Errorf("medianF(nil): want NaN")
	}
}
