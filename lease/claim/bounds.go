package claim

import "fmt"

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
