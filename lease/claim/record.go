package claim

// SchemaVersion is the on-disk schema; readers refuse anything newer.
const SchemaVersion = 1

// Record is one claim file (Python `Claim`). Absent optional fields are nil and
// omitted, never null.
type Record struct {
	SchemaVersion int
	Key           string
	Holder        string
	// AcquiredAt is epoch milliseconds, UTC.
	AcquiredAt int64
	PID        int
	Host       string
	// MachineID is the writer's machine identity; nil on older records.
	MachineID *string
	// ExpiresAt is the TTL deadline in epoch ms; nil marks a PID-liveness claim.
	ExpiresAt *int64
	Reason    *string
	// Harness names the acquiring agent harness (codex, claude, ...).
	Harness *string
	// Metadata is opaque; empty metadata is omitted from the file.
	Metadata Metadata
}

// State classifies a key (the Python `ClaimState`).
type State string

const (
	// Free: no claim file exists.
	Free State = "free"
	// Live: the holder is verifiably alive.
	Live State = "live"
	// Suspect: TTL unexpired, holder not provably alive; never stolen.
	Suspect State = "suspect"
	// Stale: the holder is dead or expired; recoverable.
	Stale State = "stale"
	// Corrupted: present but unreadable, newer schema or invalid; never touched.
	Corrupted State = "corrupted"
)

func strPtr(s string) *string { return &s }
func i64Ptr(v int64) *int64   { return &v }

// Fields returns the record as the Python writer's ordered mapping.
func (r *Record) Fields() Metadata { return recordFields(r) }
