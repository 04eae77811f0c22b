package claim

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/leasewrap/leasewrap/internal/pyyaml"
)

// marshalRecord renders rec as the Python writer does, in field order
// schema_version, key, holder, acquired_at, pid, host, machine_id?,
// expires_at?, reason?, harness?, metadata?; a record readers would refuse is
// ErrInvalid.
func marshalRecord(rec *Record) ([]byte, error) {
	if err := checkWritable(rec); err != nil {
		return nil, err
	}
	out, err := pyyaml.Dump(recordFields(rec))
	if err == nil && len(out) > MaxRecordBytes {
		return nil, fmt.Errorf("%w: the claim would be %d bytes, more than the %d (%d MiB) that readers accept; attach less metadata",
			ErrInvalid, len(out), MaxRecordBytes, MaxRecordBytes>>20)
	}
	return out, err
}

func recordFields(rec *Record) Metadata {
	m := Metadata{
		{Key: "schema_version", Value: big.NewInt(int64(rec.SchemaVersion))},
		{Key: "key", Value: rec.Key},
		{Key: "holder", Value: rec.Holder},
		{Key: "acquired_at", Value: big.NewInt(rec.AcquiredAt)},
		{Key: "pid", Value: big.NewInt(int64(rec.PID))},
		{Key: "host", Value: rec.Host},
	}
	if rec.MachineID != nil {
		m = append(m, Field{Key: "machine_id", Value: *rec.MachineID})
	}
	if rec.ExpiresAt != nil {
		m = append(m, Field{Key: "expires_at", Value: big.NewInt(*rec.ExpiresAt)})
	}
	if rec.Reason != nil {
		m = append(m, Field{Key: "reason", Value: *rec.Reason})
	}
	if rec.Harness != nil {
		m = append(m, Field{Key: "harness", Value: *rec.Harness})
	}
	if len(rec.Metadata) > 0 {
		m = append(m, Field{Key: "metadata", Value: rec.Metadata})
	}
	return m
}

// parseRecord reads a claim as the Python reader does: unknown fields ignored,
// null equals absent, schema_version defaults to 1, YAML 1.1 scalar resolvers.
// A non-empty reason means Corrupted. Oversized or too deep text is refused first.
func parseRecord(text []byte) (*Record, string) {
	if len(text) > MaxRecordBytes {
		return nil, fmt.Sprintf("larger than %d bytes (%d MiB), the bound on a claim file; no writer produces such a claim", MaxRecordBytes, MaxRecordBytes>>20)
	}
	doc, err := pyyaml.Load(text, pyyaml.Limits{Nesting: MaxNesting, AliasNodes: MaxRecordBytes})
	switch {
	case errors.Is(err, pyyaml.ErrTooDeep):
		return nil, fmt.Sprintf("collections nest deeper than %d levels (the limit of the Rust peer's YAML reader)", MaxNesting)
	case errors.Is(err, pyyaml.ErrAliasBudget):
		return nil, fmt.Sprintf("aliases expand to more than %d nodes", MaxRecordBytes)
	case err != nil:
		return nil, err.Error()
	}
	rec := &Record{SchemaVersion: SchemaVersion}
	var reason string
	intField := func(name string, required bool, bits int) (*big.Int, bool) {
		v, err := doc.Value(name)
		if v == nil && err == nil {
			if required && reason == "" {
				reason = fmt.Sprintf("field %s is missing", name)
			}
			return nil, false
		}
		bi, isInt := v.(*big.Int)
		if err != nil || !isInt {
			if reason == "" {
				reason = fmt.Sprintf("field %s is not an integer", name)
			}
			return nil, false
		}
		if bi.BitLen() >= bits {
			if reason == "" {
				reason = fmt.Sprintf("field %s is out of range", name)
			}
			return nil, false
		}
		return bi, true
	}
	strField := func(name string, required bool) *string {
		v, err := doc.Value(name)
		if v == nil && err == nil {
			if required && reason == "" {
				reason = fmt.Sprintf("field %s is missing", name)
			}
			return nil
		}
		s, isStr := v.(string)
		if err != nil || !isStr {
			if reason == "" {
				reason = fmt.Sprintf("field %s is not a string", name)
			}
			return nil
		}
		return &s
	}
	if v, ok := intField("schema_version", false, 32); ok {
		rec.SchemaVersion = int(v.Int64())
	}
	if s := strField("key", true); s != nil {
		rec.Key = *s
	}
	if s := strField("holder", true); s != nil {
		rec.Holder = *s
	}
	if v, ok := intField("acquired_at", true, 64); ok {
		rec.AcquiredAt = v.Int64()
	}
	if v, ok := intField("pid", true, 32); ok {
		rec.PID = int(v.Int64())
	}
	if s := strField("host", true); s != nil {
		rec.Host = *s
	}
	rec.MachineID = strField("machine_id", false)
	if v, ok := intField("expires_at", false, 64); ok {
		rec.ExpiresAt = i64Ptr(v.Int64())
	}
	rec.Reason = strField("reason", false)
	rec.Harness = strField("harness", false)
	if v, err := doc.Value("metadata"); v != nil || err != nil {
		m, isMap := v.(Metadata)
		switch {
		case err != nil:
			reason = fmt.Sprintf("field metadata: %v", err)
		case !isMap:
			reason = "field metadata is not a mapping"
		default:
			rec.Metadata = m
		}
	}
	if reason != "" {
		return nil, reason
	}
	if rec.SchemaVersion > SchemaVersion {
		return nil, fmt.Sprintf("schema_version=%d > supported=%d; refusing to read a newer writer's record", rec.SchemaVersion, SchemaVersion)
	}
	if rec.Key == "" || rec.Holder == "" {
		return nil, "claim key/holder must be non-empty"
	}
	return rec, ""
}
