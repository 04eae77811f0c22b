package claim

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// claimWithKeys is a valid claim whose metadata mapping has n keys.
func claimWithKeys(n int) []byte {
	var b strings.Builder
	b.WriteString("schema_version: 1\nkey: k\nholder: h\nacquired_at: 1\npid: 1\nhost: x\nmetadata:\n")
	for i := range n {
		fmt.Fprintf(&b, " k%s: %d\n", strconv.FormatInt(int64(i), 36), i%10)
	}
	return []byte(b.String())
}

// BenchmarkParseClaimKeys parses claims whose metadata has 10k, 40k and
// 80k keys. Linear parsing shows as a constant time per key across the
// sizes (ns/key); a pairwise duplicate-key check grows with the size.
func BenchmarkParseClaimKeys(b *testing.B) {
	for _, n := range []int{10_000, 40_000, 80_000} {
		text := claimWithKeys(n)
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if _, reason := parseRecord(text); reason != "" {
					b.Fatal(reason)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
	}
}
