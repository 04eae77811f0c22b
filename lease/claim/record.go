package claim

// SchemaVersion is the on-disk schema this package reads and writes.
// Readers refuse anything newer rather than guess at a future writer.
const SchemaVersion = 1

// Record is one claim file (the Python `Claim`). Optional fields are nil
// when absent; the writer omits them, never writing null.
type Record struct {
	SchemaVersion int
	Key           string
	Holder        string
	// AcquiredAt is epoch milliseconds, UTC.
	AcquiredAt int64
	PID        int
	Host       string
	// MachineID is the writer's stable machine identity; nil on records
	// written before the field existed.
	MachineID *string
	// ExpiresAt is the TTL deadline in epoch ms; nil for a PID-liveness
	// claim (the absence IS the PID-liveness marker).
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
	// Suspect: the TTL is unexpired but the holder is not provably alive.
	// Protected like Live (never stolen); only TTL expiry frees it.
	Suspect State = "suspect"
	// Stale: the holder is dead or expired; recoverable.
	Stale State = "stale"
	// Corrupted: a file is present but unreadable, of a newer schema, or
	// invalid. Never overwritten or removed by this package.
	Corrupted State = "corrupted"
)

func strPtr(s string) *string { return &s }
func i64Ptr(v int64) *int64   { return &v }

// Fields returns the record as the ordered mapping the Python writer
// dumps: schema_version, key, holder, acquired_at, pid, host, then the
// optional fields that are present (absent ones omitted, never null).
func (r *Record) Fields() Metadata { return recordFields(r) }
