package reserve

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseRecord: any bytes are a record (schema 1 records re-marshal
// to bytes that parse to an Equal record and marshal identically), a
// legacy run id, or an error classified ErrCorrupt / ErrUnsupportedSchema.
// Seeds: the serde golden verdicts.
func FuzzParseRecord(f *testing.F) {
	fh, err := os.Open("testdata/serde_parse.golden")
	if err != nil {
		f.Fatal(err)
	}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		q, _, _ := strings.Cut(sc.Text(), "\t")
		if s, err := strconv.Unquote(q); err == nil {
			f.Add([]byte(s))
		}
	}
	fh.Close()
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := ParseRecord(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupportedSchema) {
				t.Fatalf("refusal not classified: %v", err)
			}
			return
		}
		if rec.SchemaVersion != 1 {
			return // legacy: the trimmed text is the run id
		}
		out := rec.Marshal()
		again, err := ParseRecord(out)
		if err != nil || !again.Equal(rec) || !bytes.Equal(again.Marshal(), out) {
			t.Fatalf("round trip not stable: %s -> %v", out, err)
		}
	})
}

// FuzzRunIDAndHash: a run id ValidateRunID accepts is a single safe path
// element; KeyHash is 32 lowercase hex digits for any input.
func FuzzRunIDAndHash(f *testing.F) {
	for _, s := range []string{"01m8m6xyf0dk672dfwbnknfs7w", "..", "a/b", "a\x00", "a\nb", strings.Repeat("x", 10240)} {
		f.Add(s, "repo", "main")
	}
	f.Fuzz(func(t *testing.T, id, repo, branch string) {
		if ValidateRunID(id) == nil {
			if id == "" || id == "." || id == ".." || strings.ContainsAny(id, "/\x00") || filepath.Base(id) != id {
				t.Fatalf("ValidateRunID accepted unsafe %q", id)
			}
		}
		h := KeyHash(repo, branch, id)
		if len(h) != 32 || strings.Trim(h, "0123456789abcdef") != "" {
			t.Fatalf("KeyHash = %q", h)
		}
	})
}

// FuzzReadReplay: a manifest file with any content is read as published
// (a Replay) or refused as ErrManifest; never a panic, never an exit code
// outside 0..255.
func FuzzReadReplay(f *testing.F) {
	f.Add([]byte(`{"run_id":"r","exit_code":3,"finished_at":"2026-01-02T03:04:05Z"}`))
	f.Add([]byte(`{"exit_code":256}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`not json`))
	lay := Layout{Home: f.TempDir()}
	p := lay.ManifestPath("r")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := ReadReplay(lay, "r")
		if err != nil {
			if !errors.Is(err, ErrManifest) {
				t.Fatalf("refusal not classified: %v", err)
			}
			return
		}
		if r.ExitCode < 0 || r.ExitCode > 255 {
			t.Fatalf("exit code %d replayed", r.ExitCode)
		}
	})
}
