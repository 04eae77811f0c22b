package reserve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
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

// ErrTooLarge reports a run whose reservation record or manifest would be
// larger than its readers accept (MaxRecordBytes, MaxManifestBytes):
// nothing could read it back, so the key would be blocked, or its result
// lost and the job run again. NewLocker refuses such a run before anything
// is acquired.
var ErrTooLarge = errors.New("reserve: record too large")

// resolvedArgvMargin covers what command resolution can add to argv before
// the manifest records it: a file without #! runs as [/bin/sh PATH ARGS...],
// PATH absolute (at most PATH_MAX bytes, each at most six once escaped).
const resolvedArgvMargin = len(`"/bin/sh",""`) + 6*4096

// checkSize sizes, with their real encodings, the two files a run of cfg
// writes: the reservation record (run id at its longest) and the manifest
// (argv, key and the fields only known after the run at their longest).
// The error names the longest field and the limit.
func checkSize(cfg LockerConfig, lay Layout) error {
	id := strings.Repeat("x", maxRunIDLen)
	start := uint64(math.MaxUint64)
	t := time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC)
	rec := NewRecord(id, NewCreator(math.MaxUint32, &start, t, lay.MaterializerPath(id)))
	if n := len(rec.Marshal()); n > MaxRecordBytes {
		return fmt.Errorf("%w: the reservation record would be %d bytes, more than the %d its readers accept; its materializer_lease_path (under %s) alone takes %d: use a shorter home",
			ErrTooLarge, n, MaxRecordBytes, lay.Home, len(lay.MaterializerPath(id)))
	}
	sig := math.MinInt
	m := &Manifest{RunID: id, KeyHash: strings.Repeat("0", 32), Key: cfg.Key, Repo: optional(cfg.Repo), Branch: optional(cfg.Branch),
		Argv: cfg.Argv, ExitCode: math.MinInt, Signal: &sig, StartedAt: t, FinishedAt: t, Host: cfg.Host, Writer: ManifestWriter}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("reserve: encode manifest: %w", err)
	}
	// MarshalIndent puts each argv element on a line of its own: two more
	// elements, each indented.
	n := len(data) + 1 + resolvedArgvMargin + 2*(len(",\n    ")+len(`""`))
	if n <= MaxManifestBytes {
		return nil
	}
	field, fn := "", 0
	for _, f := range []struct {
		name string
		v    any
	}{{"the command line (argv)", cfg.Argv}, {"the key", cfg.Key}, {"--repo", cfg.Repo}, {"--branch", cfg.Branch}, {"the host name", cfg.Host}} {
		if b, err := json.Marshal(f.v); err == nil && len(b) > fn {
			field, fn = f.name, len(b)
		}
	}
	return fmt.Errorf("%w: the run's manifest would be up to %d bytes, more than the %d (%d MiB) its readers accept; %s alone takes %d bytes as JSON: shorten it (pass long data in a file)",
		ErrTooLarge, n, MaxManifestBytes, MaxManifestBytes>>20, field, fn)
}
