package main

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// sample is a set of measurements of one variant.
type sample []time.Duration

func (s sample) sorted() []time.Duration {
	c := append([]time.Duration(nil), s...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	return c
}

// quantile returns the q-quantile (0..1) by linear interpolation; 0 for an
// empty sample.
func (s sample) quantile(q float64) time.Duration {
	c := s.sorted()
	if len(c) == 0 {
		return 0
	}
	pos := q * float64(len(c)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	frac := pos - float64(lo)
	return c[lo] + time.Duration(frac*float64(c[hi]-c[lo]))
}

func (s sample) median() time.Duration { return s.quantile(0.5) }

// iqr is the interquartile range, the spread we report.
func (s sample) iqr() time.Duration { return s.quantile(0.75) - s.quantile(0.25) }

// ratios returns the per-round ratios a[i]/b[i] of two interleaved samples.
func ratios(a, b sample) []float64 {
	n := min(len(a), len(b))
	out := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		if b[i] > 0 {
			out = append(out, float64(a[i])/float64(b[i]))
		}
	}
	sort.Float64s(out)
	return out
}

func medianF(f []float64) float64 {
	if len(f) == 0 {
		return math.NaN()
	}
	c := append([]float64(nil), f...)
	sort.Float64s(c)
	m := len(c) / 2
	if len(c)%2 == 1 {
		return c[m]
	}
	return (c[m-1] + c[m]) / 2
}

// ms formats a duration in milliseconds with enough precision for sub-ms
// values.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
