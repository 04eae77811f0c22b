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

// MaxRecordBytes bounds a record; readers refuse a larger one (ErrCorrupt), left in place.
const MaxRecordBytes = 1 << 20

// MaxManifestBytes bounds manifest.json (argv up to ARG_MAX, six times over
// once escaped). A larger manifest still means published, but its exit code is
// refused (ErrManifest).
const MaxManifestBytes = 16 << 20

type tooLargeError struct{ limit int }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("larger than %d bytes (%d MiB), the bound on this file; no writer produces one that large", e.limit, e.limit>>20)
}

// readBounded reads r to its end; more than limit bytes is a *tooLargeError.
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

// ErrTooLarge reports a run whose record or manifest readers would refuse.
var ErrTooLarge = errors.New("reserve: record too large")

// resolvedArgvMargin covers what command resolution adds to argv: a file without
// #! runs as [/bin/sh PATH ARGS...], PATH up to PATH_MAX escaped.
const resolvedArgvMargin = len(`"/bin/sh",""`) + 6*4096

// checkSize sizes the record and manifest of cfg at their longest.
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
	// Two more argv elements, each on its own indented line.
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
