package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// withUnknown inserts unknown fields into an encoded owner record: n
// short ones and one nested depth levels (serde_json skips unknown fields
// at any depth).
func withUnknown(t testing.TB, o *Owner, n, depth int) []byte {
	t.Helper()
	data, err := EncodeOwner(o)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		b.WriteString(`"_` + strconv.FormatInt(int64(i), 36) + `":0,`)
	}
	b.WriteString(`"deep":` + strings.Repeat(`[{"a":`, depth/2) + "1" + strings.Repeat("}]", depth/2) + ",")
	return append([]byte(b.String()), data[1:]...)
}

// TestDecodeOwnerManyAndDeepUnknownFields: 100 000 unknown fields and one
// nested 1000 levels decode, as serde_json reads them.
func TestDecodeOwnerManyAndDeepUnknownFields(t *testing.T) {
	o := testOwner(NewID(), testContext("many", 6))
	data := withUnknown(t, &o, 100_000, 1000)
	if len(data) > MaxRecordBytes {
		t.Fatalf("test record is %d bytes, over the bound", len(data))
	}
	back, err := DecodeOwner(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.LeaseToken != o.LeaseToken {
		t.Fatalf("want token %s, have %s", o.LeaseToken, back.LeaseToken)
	}
}

// TestOwnerRecordOverBoundIsUnverifiableAndKept: a live owner's record
// padded past MaxRecordBytes does not decode: an acquirer refuses to run
// beside it (UnverifiableError), Inspect lists it as unverifiable, and it
// stays as it was. At the bound it is the live owner it describes.
func TestOwnerRecordOverBoundIsUnverifiableAndKept(t *testing.T) {
	for _, over := range []bool{false, true} {
		t.Run("over="+strconv.FormatBool(over), func(t *testing.T) {
			s := NewStore(t.TempDir())
			sid := NewID()
			o := testOwner(sid, testContext("big", 5))
			o.SchemaVersion = 2 // kill(pid, 0): this test process is alive
			path := ownerPathOf(s, sid, &o)
			data, err := EncodeOwner(&o)
			if err != nil {
				t.Fatal(err)
			}
			size := MaxRecordBytes
			if over {
				size++
			}
			data = append(data, strings.Repeat(" ", size-len(data))...)
			if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o666); err != nil {
				t.Fatal(err)
			}
			_, err = s.Acquire(context.Background(), sid, testContext("next", 7))
			var uv *UnverifiableError
			if over && (!errors.As(err, &uv) || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "larger than")) {
				t.Fatalf("want *UnverifiableError naming the bound, have %T: %v", err, err)
			}
			if !over {
				wantOwned(t, err)
			}
			recs, err := s.Inspect(sid)
			if err != nil || len(recs) != 1 {
				t.Fatalf("want one record, have %v (%v)", recs, err)
			}
			if over != (recs[0].Owner == nil) {
				t.Errorf("want decoded=%v, have %+v", !over, recs[0])
			}
			if have, _ := os.ReadFile(path); string(have) != string(data) {
				t.Error("the record changed")
			}
		})
	}
}

// BenchmarkDecodeOwnerKeys decodes owner records with 10k, 40k and 80k
// unknown fields: a constant ns/key across the sizes is linear decoding.
func BenchmarkDecodeOwnerKeys(b *testing.B) {
	o := testOwner(NewID(), testContext("bench", 6))
	for _, n := range []int{10_000, 40_000, 80_000} {
		data := withUnknown(b, &o, n, 2)
		b.Run(strconv.Itoa(n/1000)+"k", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := DecodeOwner(data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
	}
}
