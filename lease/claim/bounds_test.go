package claim

import (
	"errors"
	"fmt"
	"math/big"
	"os"
	"strconv"
	"strings"
	"testing"
)

const boundsHead = "schema_version: 1\nkey: k\nholder: h\nacquired_at: 1\npid: 1\nhost: x\n"

// nested is a claim whose collections nest total levels deep, the root
// mapping included: metadata is a block mapping holding flow collections
// (maps or, with seqs, sequences).
func nested(total int, seqs bool) string {
	inner := total - 2 // below the root and the metadata mapping
	open, close := "{a: ", "}"
	if seqs {
		open, close = "[", "]"
	}
	return boundsHead + "metadata:\n  a: " + strings.Repeat(open, inner) + "1" + strings.Repeat(close, inner) + "\n"
}

// TestParseRecordNestingBound: MaxNesting levels read (serde_yaml, the
// Rust peer's reader, reads exactly as many), one more is Corrupted.
func TestParseRecordNestingBound(t *testing.T) {
	for _, seqs := range []bool{false, true} {
		for _, c := range []struct {
			total int
			ok    bool
		}{{MaxNesting, true}, {MaxNesting + 1, false}, {500, false}, {9000, false}} {
			t.Run(fmt.Sprintf("seqs=%v/%d", seqs, c.total), func(t *testing.T) {
				rec, reason := parseRecord([]byte(nested(c.total, seqs)))
				if c.ok && reason != "" {
					t.Fatalf("want the claim read, have %q", reason)
				}
				if !c.ok && (rec != nil || !strings.Contains(reason, "nest deeper than 128")) {
					t.Fatalf("want refused as nested too deep, have %v %q", rec, reason)
				}
				if c.ok && metadataDepth(rec.Metadata, 1000) != MaxNesting-1 {
					t.Fatalf("want metadata %d levels deep, have %d", MaxNesting-1, metadataDepth(rec.Metadata, 1000))
				}
			})
		}
	}
}

// TestParseRecordManyKeys: 100 000 metadata keys (within the byte bound)
// read in order; a repeated key keeps its first position and its last
// value, as a Python dict does.
func TestParseRecordManyKeys(t *testing.T) {
	const n = 100_000
	var b strings.Builder
	b.WriteString(boundsHead + "metadata:\n")
	for i := range n {
		fmt.Fprintf(&b, " k%s: %d\n", strconv.FormatInt(int64(i), 36), i%10)
	}
	b.WriteString(" k0: last\n")
	if b.Len() > MaxRecordBytes {
		t.Fatalf("test claim is %d bytes, over the bound", b.Len())
	}
	rec, reason := parseRecord([]byte(b.String()))
	if reason != "" {
		t.Fatal(reason)
	}
	if len(rec.Metadata) != n {
		t.Fatalf("want %d keys, have %d", n, len(rec.Metadata))
	}
	if f := rec.Metadata[0]; f.Key != "k0" || f.Value != "last" {
		t.Errorf("want k0: last first, have %v", f)
	}
	if f := rec.Metadata[n-1]; f.Key != "k"+strconv.FormatInt(n-1, 36) || f.Value.(*big.Int).Int64() != (n-1)%10 {
		t.Errorf("want the last key last, have %v", f)
	}
}

// TestParseRecordAliasBomb: anchors that refer to each other would expand
// exponentially; they are refused once the expansion passes the bound.
func TestParseRecordAliasBomb(t *testing.T) {
	text := boundsHead + "metadata:\n  a: &a [1,1,1,1,1,1,1,1,1,1]\n"
	for i, prev := range "abcdefghi" {
		name := string(rune('b' + i))
		text += fmt.Sprintf("  %s: &%s [%s]\n", name, name, strings.TrimSuffix(strings.Repeat("*"+string(prev)+",", 10), ","))
	}
	rec, reason := parseRecord([]byte(text))
	if rec != nil || !strings.Contains(reason, "aliases expand") {
		t.Fatalf("want refused as an alias bomb, have %v %q", rec, reason)
	}
	// An anchor that contains itself ends at the nesting bound.
	if rec, reason := parseRecord([]byte(boundsHead + "metadata:\n  a: &a [*a]\n")); rec != nil || !strings.Contains(reason, "nest deeper") {
		t.Fatalf("want a self-containing anchor refused, have %v %q", rec, reason)
	}
	// A few aliases are fine.
	if _, reason := parseRecord([]byte(boundsHead + "metadata:\n  a: &a [1, 2]\n  b: *a\n")); reason != "" {
		t.Fatal(reason)
	}
}

// TestClaimFileOverBoundIsCorruptedAndKept: a claim file one byte over
// MaxRecordBytes (a valid claim padded with a comment) is Corrupted for
// Status and Acquire and stays as it was; one at the bound reads.
func TestClaimFileOverBoundIsCorruptedAndKept(t *testing.T) {
	pad := func(n int) []byte {
		rec := fmt.Sprintf("%sexpires_at: %d\n#", boundsHead, nowMs()+3_600_000)
		return []byte(rec + strings.Repeat("x", n-len(rec)-1) + "\n")
	}
	for _, c := range []struct {
		size  int
		state State
	}{{MaxRecordBytes, Suspect}, {MaxRecordBytes + 1, Corrupted}, {8 * MaxRecordBytes, Corrupted}} {
		t.Run(fmt.Sprint(c.size), func(t *testing.T) {
			cl, root := newTestClaims(t)
			path := lockfile(t, root, "k")
			if err := os.MkdirAll(strings.TrimSuffix(path, "/k.lock"), 0o755); err != nil {
				t.Fatal(err)
			}
			content := pad(c.size)
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
			if st := cl.Status("k"); st.State != c.state {
				t.Fatalf("want %s, have %s (%v)", c.state, st.State, st.Err)
			}
			_, err := cl.Acquire(t.Context(), "k", "other", AcquireOptions{})
			var ce *CorruptError
			if c.state == Corrupted && (!errors.As(err, &ce) || !strings.Contains(ce.Reason, "larger than")) {
				t.Fatalf("want a CorruptError naming the bound, have %v", err)
			}
			if c.state != Corrupted && err == nil {
				t.Fatal("acquired over a suspect claim")
			}
			if have, err := os.ReadFile(path); err != nil || string(have) != string(content) {
				t.Fatalf("the claim file changed (%v)", err)
			}
		})
	}
}

// TestMetadataWriteBounds: metadata the readers would refuse is ErrInvalid
// when parsed from JSON (the CLI's --metadata) and when acquired through
// the API; nothing is written.
func TestMetadataWriteBounds(t *testing.T) {
	deep := func(levels int) string {
		return strings.Repeat(`{"a":`, levels) + "1" + strings.Repeat("}", levels)
	}
	if _, err := ParseMetadataJSON([]byte(deep(MaxNesting - 1))); err != nil {
		t.Fatalf("metadata %d levels deep: %v", MaxNesting-1, err)
	}
	if _, err := ParseMetadataJSON([]byte(`{"a":` + strings.Repeat("[", MaxNesting-2) + strings.Repeat("]", MaxNesting-2) + "}")); err != nil {
		t.Fatalf("lists %d levels deep: %v", MaxNesting-1, err)
	}
	// Ten thousand levels: the reported case, a 60 kB argument.
	for _, levels := range []int{MaxNesting, 10_000} {
		if _, err := ParseMetadataJSON([]byte(deep(levels))); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "nests more than") {
			t.Fatalf("metadata %d levels deep: want ErrInvalid naming the depth, have %v", levels, err)
		}
	}
	// 100 kB of JSON that PyYAML's block style indents to 10 MB.
	wide := "[" + strings.TrimSuffix(strings.Repeat("1,", 50_000), ",") + "]"
	huge := strings.Repeat(`{"k":`, 100) + wide + strings.Repeat("}", 100)
	if _, err := ParseMetadataJSON([]byte(huge)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "more than the 1048576") {
		t.Fatalf("want ErrInvalid naming the size bound, have %v", err)
	}
	// Repeated keys: first position, last value, in linear time.
	m, err := ParseMetadataJSON([]byte(`{"a":1,"b":2,"a":3}`))
	if err != nil || len(m) != 2 || m[0].Key != "a" || m[0].Value.(*big.Int).Int64() != 3 {
		t.Fatalf("want [a:3 b:2], have %v (%v)", m, err)
	}

	c, root := newTestClaims(t)
	var md any = "leaf"
	for range MaxNesting {
		md = Metadata{{Key: "a", Value: md}}
	}
	_, err = c.Acquire(t.Context(), "k", "h", AcquireOptions{Metadata: md.(Metadata)})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("want ErrInvalid, have %v", err)
	}
	if _, err := os.Stat(lockfile(t, root, "k")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a claim was written: %v", err)
	}
}
