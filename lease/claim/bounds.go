package claim

import (
	"fmt"
	"math"

	"github.com/leasewrap/leasewrap/internal/pyyaml"
)

// MaxRecordBytes bounds a claim file. A reader reads at most this many
// bytes and refuses a larger file as Corrupted (left in place); the writer
// refuses to write a larger record (ErrInvalid). Real claims are a few
// hundred bytes: the fixed fields plus whatever metadata an agent attaches
// (a ticket, a branch, a few paths), and the peers' CLIs take metadata as
// one argument, which Linux caps at 128 KiB. 1 MiB is eight times that;
// YAML costs about a microsecond or two per node to parse, so a file at the
// bound made of nothing but keys still reads in well under a second.
const MaxRecordBytes = 1 << 20

// MaxNesting bounds how deeply a claim's collections nest, the document's
// root mapping counting as one (so metadata may nest MaxNesting-2 levels
// below its own mapping). It is the recursion limit of serde_yaml, which
// the Rust peer reads claims with: a deeper claim is unreadable to it.
// PyYAML's pure-Python loader (the reference's yaml.safe_load) fails a
// few hundred levels deeper, at Python's recursion limit. Readers refuse a
// deeper claim as Corrupted; the writer refuses to write one (ErrInvalid).
const MaxNesting = 128

// metadataDepth is how deeply v's collections nest (0 for a scalar).
// It stops counting past limit, so a hostile value costs no more than
// limit levels of recursion.
func metadataDepth(v any, limit int) int {
	if limit < 0 {
		return 0
	}
	deepest := 0
	switch x := v.(type) {
	case Metadata:
		for _, f := range x {
			deepest = max(deepest, metadataDepth(f.Value, limit-1))
			if deepest >= limit {
				break
			}
		}
	case []any:
		for _, e := range x {
			deepest = max(deepest, metadataDepth(e, limit-1))
			if deepest >= limit {
				break
			}
		}
	default:
		return 0
	}
	return deepest + 1
}

// checkWritable refuses metadata a claim cannot carry: nested deeper
// than the readers accept (the metadata mapping sits one level below the
// record's root) or, once written, larger than MaxRecordBytes.
func checkWritable(rec *Record) error {
	if d := metadataDepth(rec.Metadata, MaxNesting); d > MaxNesting-1 {
		return fmt.Errorf("%w: metadata nests more than %d levels deep; claims nest at most %d levels (root included), the limit of the Rust peer's YAML reader",
			ErrInvalid, MaxNesting-1, MaxNesting)
	}
	return nil
}

// checkSize refuses a claim whose record, at its largest (pid and
// timestamps at their longest encodings), would be larger than
// MaxRecordBytes: readers (this package's included) would refuse it as
// corrupted, so the key would be blocked until someone removed it. The
// error (ErrInvalid) names the longest field. NewLocker calls it, so such
// a run is refused before anything is written or run.
func (c *Claims) checkSize(key, holder string, o AcquireOptions) error {
	o.PID = math.MaxInt32
	rec := c.makeClaim(key, holder, o)
	rec.AcquiredAt = math.MaxInt64
	if rec.ExpiresAt != nil {
		rec.ExpiresAt = i64Ptr(math.MaxInt64)
	}
	if err := checkWritable(rec); err != nil {
		return err
	}
	out, err := pyyaml.Dump(recordFields(rec))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if len(out) <= MaxRecordBytes {
		return nil
	}
	field, n := "", 0
	for _, f := range recordFields(rec) {
		b, err := pyyaml.Dump(Metadata{f})
		if err == nil && len(b) > n {
			field, n = f.Key, len(b)
		}
	}
	return fmt.Errorf("%w: the claim record would be %d bytes, more than the %d (%d MiB) its readers accept; its %s field alone takes %d bytes: shorten it",
		ErrInvalid, len(out), MaxRecordBytes, MaxRecordBytes>>20, field, n)
}
