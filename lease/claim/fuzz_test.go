package claim

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseRecord: any bytes either parse into a record whose re-emitted
// YAML parses back to the same bytes (round-trip stable), or are refused
// with a reason (classified corrupt). Never a panic. Seeds: the PyYAML
// golden records.
func FuzzParseRecord(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.yaml")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(""))
	f.Add([]byte("schema_version: 2\nkey: k\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, reason := parseRecord(b)
		if rec == nil {
			if reason == "" {
				t.Fatalf("refused without a reason: %q", b)
			}
			return
		}
		if reason != "" {
			t.Fatalf("accepted with a reason %q", reason)
		}
		out, err := marshalRecord(rec)
		if err != nil {
			return // a parsed value the writer cannot emit is refused at write time
		}
		again, reason := parseRecord(out)
		if again == nil {
			t.Fatalf("re-emitted record refused (%s):\n%s", reason, out)
		}
		out2, err := marshalRecord(again)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("round trip not stable:\n%s\n---\n%s (%v)", out, out2, err)
		}
	})
}

// FuzzKey: a valid key encodes to a file name that decodes back to it and
// never contains a path separator, NUL or newline (the file is
// <encoded>.lock, so ".." is an ordinary name); an invalid key is refused, not encoded
// into a path.
func FuzzKey(f *testing.F) {
	for _, k := range []string{"build:nightly", "session:abc", "..", "../x", "a/b", "a\x00b", "a\nb", "ünï", ""} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		enc := EncodeKey(key)
		if bytes.ContainsAny([]byte(enc), "/\x00\n") {
			t.Fatalf("EncodeKey(%q) = %q is not a safe file name stem (the file is stem+\".lock\")", key, enc)
		}
		dec, ok := decodeKey(enc)
		if !ok || dec != key {
			t.Fatalf("decodeKey(EncodeKey(%q)) = %q, %v", key, dec, ok)
		}
		if ValidateKey(key) == nil && len(enc) > 240 {
			t.Fatalf("valid key %q encodes to %d bytes, over the 240-byte file name limit", key, len(enc))
		}
	})
}
