package reserve

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/lease"
)

// manyAndDeep is a JSON object body fragment: n unknown fields and one
// unknown field nested depth levels, which serde_json skips at any depth.
func manyAndDeep(n, depth int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(`"` + strconv.FormatInt(int64(i), 36) + `":0,`)
	}
	b.WriteString(`"deep":` + strings.Repeat(`{"a":[`, depth/2) + "1" + strings.Repeat("]}", depth/2) + ",")
	return b.String()
}

// TestParseRecordManyAndDeepUnknownFields: a record with 100 000 unknown
// fields and one nested 1000 levels reads (serde_json ignores unknown
// fields at any depth), keeping the unknown fields in order.
func TestParseRecordManyAndDeepUnknownFields(t *testing.T) {
	const n = 100_000
	raw := `{` + manyAndDeep(n, 1000) + `"schema_version":1,"run_id":"01runaaaaaaaaaaaaaaaaaaaaaaaaa","creator":null,"stale_run_ids":[]}`
	if len(raw) > MaxRecordBytes {
		t.Fatalf("test record is %d bytes, over the bound", len(raw))
	}
	r, err := ParseRecord([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if r.RunID != "01runaaaaaaaaaaaaaaaaaaaaaaaaa" || len(r.Unknown) != n+1 || r.Unknown[n-1].Name != strconv.FormatInt(n-1, 36) {
		t.Fatalf("want the run id and %d unknown fields in order, have %q and %d", n+1, r.RunID, len(r.Unknown))
	}
	// A duplicate of a known field is still refused, however many fields.
	if _, err := ParseRecord([]byte(`{` + manyAndDeep(n, 10) + `"schema_version":1,"run_id":"a","run_id":"b"}`)); !errorsIs(err, ErrCorrupt) {
		t.Fatalf("want ErrCorrupt for a duplicate run_id, have %v", err)
	}
}

// TestReadReplayBounds: a manifest over MaxManifestBytes is refused
// (ErrManifest, still published) and left as it was; one with 100 000
// extra fields and deep nesting replays its exit code.
func TestReadReplayBounds(t *testing.T) {
	l := NewStore(t.TempDir()).Layout()
	write := func(runID, content string) string {
		p := l.ManifestPath(runID)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("01many", `{`+manyAndDeep(100_000, 1000)+`"exit_code":7}`)
	r, err := ReadReplay(l, "01many")
	if err != nil || r.ExitCode != 7 {
		t.Fatalf("want exit code 7 replayed, have %+v (%v)", r, err)
	}
	big := `{"exit_code":7,"argv":["` + strings.Repeat("a", MaxManifestBytes) + `"]}`
	p := write("01huge", big)
	_, err = ReadReplay(l, "01huge")
	if !errorsIs(err, ErrManifest) || !errorsIs(err, lease.ErrRefused) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("want ErrManifest naming the bound, have %v", err)
	}
	if ok, _ := IsPublished(l, "01huge"); !ok {
		t.Fatal("an oversized manifest no longer counts as published")
	}
	if have, _ := os.ReadFile(p); string(have) != big {
		t.Fatal("the manifest changed")
	}
}

// BenchmarkParseRecordKeys parses records with 10k, 40k and 80k unknown
// fields: a constant ns/key across the sizes is linear parsing.
func BenchmarkParseRecordKeys(b *testing.B) {
	for _, n := range []int{10_000, 40_000, 80_000} {
		raw := []byte(`{` + manyAndDeep(n, 2) + `"schema_version":1,"run_id":"01runaaaaaaaaaaaaaaaaaaaaaaaaa","creator":null,"stale_run_ids":[]}`)
		b.Run(strconv.Itoa(n/1000)+"k", func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := ParseRecord(raw); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
	}
}
