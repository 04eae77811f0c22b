package reserve

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leasewrap/leasewrap/internal/serdejson"
)

// SchemaVersion is the record schema written and accepted (legacy 0 is read only).
const SchemaVersion = 1

// Creator is the identity of the process materializing a run (CreatorLease).
type Creator struct {
	PID uint32
	// PIDStartSecs is the creator's start time in Unix seconds, or nil.
	PIDStartSecs *uint64
	// StartedAt is when the creator reserved (UTC; nanoseconds compared exactly).
	StartedAt time.Time
	// MaterializerLeasePath is the creator's lease file, "" for none (null).
	MaterializerLeasePath string
	hasLeasePath          bool
}

// NewCreator returns a creator identity; leasePath "" is written as null.
func NewCreator(pid uint32, startSecs *uint64, startedAt time.Time, leasePath string) *Creator {
	return &Creator{PID: pid, PIDStartSecs: startSecs, StartedAt: startedAt.UTC().Round(0),
		MaterializerLeasePath: leasePath, hasLeasePath: leasePath != ""}
}

// HasLeasePath reports whether the record names a materializer lease.
func (c *Creator) HasLeasePath() bool { return c.hasLeasePath }

// Record is a keyed reservation (orchestratectl's ReservationRecord). Schema 0
// (legacy) is a bare run id: no Creator, replayable, never reclaimed. Unknown
// schema 1 fields are kept in Unknown for display only.
type Record struct {
	SchemaVersion uint32
	RunID         string
	Creator       *Creator
	// StaleRunIDs are staging run ids inherited from reclaimed creators.
	StaleRunIDs []string
	Unknown     []Field
}

// Field is one unknown top-level field of a record, as raw JSON.
type Field struct {
	Name  string
	Value string
}

// NewRecord returns a schema 1 record for runID made by creator.
func NewRecord(runID string, creator *Creator) *Record {
	return &Record{SchemaVersion: SchemaVersion, RunID: runID, Creator: creator, StaleRunIDs: []string{}}
}

// Legacy reports whether r is a plain-run-id record (schema 0).
func (r *Record) Legacy() bool { return r.SchemaVersion == 0 }

// Equal compares field by field as orchestratectl's PartialEq (Unknown ignored);
// Reclaim replaces only a record Equal to the observed one.
func (r *Record) Equal(o *Record) bool {
	if r == nil || o == nil {
		return r == o
	}
	if r.SchemaVersion != o.SchemaVersion || r.RunID != o.RunID || !slices.Equal(r.StaleRunIDs, o.StaleRunIDs) {
		return false
	}
	a, b := r.Creator, o.Creator
	if a == nil || b == nil {
		return a == b
	}
	if a.PID != b.PID || a.MaterializerLeasePath != b.MaterializerLeasePath || a.hasLeasePath != b.hasLeasePath {
		return false
	}
	if (a.PIDStartSecs == nil) != (b.PIDStartSecs == nil) || a.PIDStartSecs != nil && *a.PIDStartSecs != *b.PIDStartSecs {
		return false
	}
	return a.StartedAt.Equal(b.StartedAt)
}

// Marshal encodes r as serde_json::to_vec does: compact, declaration order, null
// for None, started_at in chrono's RFC 3339 with "Z"; Unknown is not written.
func (r *Record) Marshal() []byte {
	var b strings.Builder
	b.WriteString(`{"schema_version":`)
	b.WriteString(strconv.FormatUint(uint64(r.SchemaVersion), 10))
	b.WriteString(`,"run_id":`)
	serdejson.WriteString(&b, r.RunID)
	b.WriteString(`,"creator":`)
	if c := r.Creator; c == nil {
		b.WriteString("null")
	} else {
		b.WriteString(`{"pid":`)
		b.WriteString(strconv.FormatUint(uint64(c.PID), 10))
		b.WriteString(`,"pid_start_secs":`)
		if c.PIDStartSecs == nil {
			b.WriteString("null")
		} else {
			b.WriteString(strconv.FormatUint(*c.PIDStartSecs, 10))
		}
		b.WriteString(`,"started_at":`)
		serdejson.WriteString(&b, FormatTime(c.StartedAt))
		b.WriteString(`,"materializer_lease_path":`)
		if !c.hasLeasePath {
			b.WriteString("null")
		} else {
			serdejson.WriteString(&b, c.MaterializerLeasePath)
		}
		b.WriteString("}")
	}
	b.WriteString(`,"stale_run_ids":[`)
	for i, id := range r.StaleRunIDs {
		if i > 0 {
			b.WriteString(",")
		}
		serdejson.WriteString(&b, id)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// FormatTime renders t as chrono serializes DateTime<Utc>: RFC 3339, "Z", 0, 3, 6
// or 9 fractional digits (AutoSi).
func FormatTime(t time.Time) string {
	t = t.UTC()
	s := t.Format("2006-01-02T15:04:05")
	ns := t.Nanosecond()
	switch {
	case ns == 0:
	case ns%1_000_000 == 0:
		s += fmt.Sprintf(".%03d", ns/1_000_000)
	case ns%1_000 == 0:
		s += fmt.Sprintf(".%06d", ns/1_000)
	default:
		s += fmt.Sprintf(".%09d", ns)
	}
	return s + "Z"
}
