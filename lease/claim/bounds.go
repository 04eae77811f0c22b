package claim

import (
	"fmt"
	"math"

	"github.com/leasewrap/leasewrap/internal/pyyaml"
)

// MaxRecordBytes bounds a claim file: readers refuse a larger one as Corrupted,
// the writer refuses to write one (ErrInvalid).
const MaxRecordBytes = 1 << 20

// MaxNesting bounds how deeply a claim's collections nest, the root mapping
// counting as one: serde_yaml's recursion limit (the Rust peer). Deeper is
// Corrupted to readers and ErrInvalid to the writer.
const MaxNesting = 128

// metadataDepth is how deeply v's collections nest, counting no further than limit.
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

// checkWritable refuses a record readers would refuse (MaxNesting, MaxRecordBytes).
func checkWritable(rec *Record) error {
	if d := metadataDepth(rec.Metadata, MaxNesting); d > MaxNesting-1 {
		return fmt.Errorf("%w: metadata nests more than %d levels deep; claims nest at most %d levels (root included), the limit of the Rust peer's YAML reader",
			ErrInvalid, MaxNesting-1, MaxNesting)
	}
	return nil
}

// checkSize refuses (ErrInvalid, naming the longest field) a claim whose record at
// its largest would exceed MaxRecordBytes, before anything is written.
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
