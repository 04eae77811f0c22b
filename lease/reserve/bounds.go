package reserve

import (
	"fmt"
	"io"
)

// MaxRecordBytes bounds a reservation record. Readers read at most this
// many bytes and refuse a larger record as corrupt (ErrCorrupt, matching
// lease.ErrRefused), leaving it in place. orchestratectl writes a run id,
// its creator (pid, start time, a path) and the run ids of reclaimed
// creators, which it clears once their staging is cleaned up: a few
// hundred bytes. 1 MiB leaves room for tens of thousands of stale run ids.
const MaxRecordBytes = 1 << 20

// MaxManifestBytes bounds a published run's manifest.json. Manifests
// carry the run's argv, which Linux caps at ARG_MAX (2 MiB with the
// default 8 MiB stack) and which JSON escaping can make up to six times
// longer (\u0001 for one byte); 16 MiB covers that. A larger manifest
// still means "published" (the run does not run again) but its exit code
// is refused (ErrManifest).
const MaxManifestBytes = 16 << 20

// tooLargeError: a file longer than its kind's bound.
type tooLargeError struct{ limit int }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("larger than %d bytes (%d MiB), the bound on this file; no writer produces one that large", e.limit, e.limit>>20)
}

// readBounded reads r to its end, at most limit bytes; more is a
// *tooLargeError.
func readBounded(r io.Reader, limit int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, &tooLargeError{limit}
	}
	return b, nil
}
