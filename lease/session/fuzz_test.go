package session

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeOwner: an owner record either decodes to an Owner that
// encodes to bytes that decode and encode identically (round-trip
// stable), or is refused. Seeds: the serde-verified golden records.
func FuzzDecodeOwner(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.json")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := DecodeOwner(b)
		if err != nil {
			return
		}
		out, err := EncodeOwner(o)
		if err != nil {
			t.Fatalf("decoded owner does not encode: %v", err)
		}
		again, err := DecodeOwner(out)
		if err != nil {
			t.Fatalf("encoded owner does not decode: %v\n%s", err, out)
		}
		out2, err := EncodeOwner(again)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("round trip not stable:\n%s\n---\n%s", out, out2)
		}
	})
}

// FuzzParseID: an accepted session id is canonical (String returns the
// input) and a single safe path element.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42", "5F0C6D4E-3B1A-4F59-9B8E-0D7F2A9C1E42", "..", "a/b", "\x00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseID(s)
		if err != nil {
			return
		}
		if id.String() != s || filepath.Base(s) != s || s == ".." {
			t.Fatalf("ParseID accepted %q as %q", s, id.String())
		}
	})
}
