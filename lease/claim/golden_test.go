package claim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/internal/pyyaml"
)

// TestGoldenPyYAMLRecords checks leasewrap against files written by the
// reference writer (PyYAML safe_dump, testdata/gen_golden.py): each reads
// as the record Python sees in it, and leasewrap's own output for that
// record is byte-identical to what PyYAML writes for it.
func TestGoldenPyYAMLRecords(t *testing.T) {
	files, err := filepath.Glob("testdata/*.canonical.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files (%v)", err)
	}
	for _, canonPath := range files {
		name := strings.TrimSuffix(filepath.Base(canonPath), ".canonical.yaml")
		t.Run(name, func(t *testing.T) {
			written := mustRead(t, "testdata/"+name+".yaml")
			canon := mustRead(t, canonPath)
			var want any
			if err := json.Unmarshal(mustRead(t, "testdata/"+name+".json"), &want); err != nil {
				t.Fatal(err)
			}
			for _, src := range []struct {
				what string
				text []byte
			}{{"as written", written}, {"canonical", canon}} {
				rec, reason := parseRecord(src.text)
				if reason != "" {
					t.Fatalf("%s: want parsed, have corrupted: %s", src.what, reason)
				}
				js, err := recordFields(rec).MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				var have any
				json.Unmarshal(js, &have)
				if !reflect.DeepEqual(have, want) {
					t.Errorf("%s: read wrong record\nwant %v\nhave %v", src.what, want, have)
				}
				out, err := marshalRecord(rec)
				if err != nil {
					t.Fatal(err)
				}
				if string(out) != string(canon) {
					t.Errorf("%s: leasewrap's bytes differ from PyYAML's\nwant:\n%s\nhave:\n%s", src.what, canon, out)
				}
			}
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPyYAMLCorpusByteIdentical replays the seeded random corpus: every
// record written by leasewrap is byte-identical to PyYAML's dump, and
// PyYAML's dump reads back as the same record.
func TestPyYAMLCorpusByteIdentical(t *testing.T) {
	var corpus []struct{ JSON, YAML string }
	if err := json.Unmarshal(mustRead(t, "testdata/pyyaml_corpus.json"), &corpus); err != nil {
		t.Fatal(err)
	}
	if len(corpus) == 0 {
		t.Fatal("empty corpus")
	}
	for i, c := range corpus {
		m, err := ParseMetadataJSON([]byte(c.JSON))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		out, err := pyyaml.Dump(m)
		if err != nil || string(out) != c.YAML {
			t.Errorf("case %d: writer differs (%v)\nwant:\n%s\nhave:\n%s", i, err, c.YAML, out)
			continue
		}
		rec, reason := parseRecord([]byte(c.YAML))
		if reason != "" {
			if empty(m, "key") || empty(m, "holder") {
				continue // an empty key or holder is Corrupted by rule
			}
			t.Errorf("case %d: want parsed, have %s", i, reason)
			continue
		}
		if back, err := marshalRecord(rec); err != nil || string(back) != c.YAML {
			t.Errorf("case %d: read-then-write differs (%v)\nwant:\n%s\nhave:\n%s", i, err, c.YAML, back)
		}
	}
}

// empty reports whether m holds key with the empty string.
func empty(m Metadata, key string) bool {
	for _, f := range m {
		if f.Key == key {
			return f.Value == ""
		}
	}
	return false
}
