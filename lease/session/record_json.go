package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/leasewrap/leasewrap/internal/serdejson"
)

// ownerFields is the seed's Rust struct order, which serde writes in.
var ownerFields = [...]string{
	"schema_version",
	"session_id",
	"lease_token",
	"pid",
	"storage_writer_epoch",
	"daemon_namespace",
	"build_fingerprint",
	"protocol_version",
	"endpoint",
	"executable_path",
	"daemon_instance_id",
	"acquired_at_ms",
	"last_seen_ms",
}

// EncodeOwner writes o as serde_json::to_vec_pretty does: two-space indent,
// struct order, every field, None as null, serde's escaping, no final newline.
func EncodeOwner(o *Owner) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{")
	field := func(i int) {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  ")
		serdejson.WriteString(&b, ownerFields[i])
		b.WriteString(": ")
	}
	var err error
	str := func(i int, v *string) {
		field(i)
		if v == nil {
			b.WriteString("null")
			return
		}
		if !utf8.ValidString(*v) {
			if err == nil {
				if ownerFields[i] == "executable_path" {
					err = fmt.Errorf("session access metadata serialization failed: path contains invalid UTF-8 characters")
				} else {
					err = fmt.Errorf("session access metadata serialization failed: %s is not valid UTF-8", ownerFields[i])
				}
			}
			return
		}
		serdejson.WriteString(&b, *v)
	}
	u32 := func(i int, v *uint32) {
		field(i)
		if v == nil {
			b.WriteString("null")
			return
		}
		b.WriteString(strconv.FormatUint(uint64(*v), 10))
	}
	u32(0, &o.SchemaVersion)
	sid := o.SessionID.String()
	str(1, &sid)
	str(2, &o.LeaseToken)
	u32(3, &o.PID)
	u32(4, o.StorageWriterEpoch)
	str(5, o.DaemonNamespace)
	str(6, o.BuildFingerprint)
	u32(7, o.ProtocolVersion)
	str(8, o.Endpoint)
	str(9, o.ExecutablePath)
	str(10, o.DaemonInstanceID)
	field(11)
	b.WriteString(strconv.FormatUint(o.AcquiredAtMs, 10))
	field(12)
	b.WriteString(strconv.FormatUint(o.LastSeenMs, 10))
	b.WriteString("\n}")
	if err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// DecodeOwner decodes a record at least as strictly as serde_json::from_slice:
// one JSON object (or the 13-element array serde accepts), exact field names
// once each, required fields non-null, non-negative in-range integers, valid
// UTF-8, unknown fields ignored. session_id must be canonical lowercase. Data
// over MaxRecordBytes is refused unread.
func DecodeOwner(data []byte) (*Owner, error) {
	o, err := decodeOwner(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return o, nil
}

func decodeOwner(data []byte) (*Owner, error) {
	if len(data) > MaxRecordBytes {
		return nil, fmt.Errorf("larger than %d bytes (%d MiB), the bound on an owner record; no writer produces one that large", MaxRecordBytes, MaxRecordBytes>>20)
	}
	if !utf8.Valid(data) {
		return nil, errors.New("not valid UTF-8")
	}
	if !json.Valid(data) {
		return nil, errors.New("not a single well-formed JSON value")
	}
	if err := serdejson.CheckSurrogates(data); err != nil {
		return nil, err
	}
	fields := make(map[string]json.RawMessage, len(ownerFields))
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	switch trimmed[0] {
	case '{':
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		known := make(map[string]bool, len(ownerFields))
		for _, f := range ownerFields {
			known[f] = true
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key := tok.(string)
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, err
			}
			if !known[key] {
				continue
			}
			if _, dup := fields[key]; dup {
				return nil, fmt.Errorf("duplicate field %q", key)
			}
			fields[key] = raw
		}
		if _, err := dec.Token(); err != nil && err != io.EOF {
			return nil, err
		}
	case '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(trimmed, &elems); err != nil {
			return nil, err
		}
		if len(elems) != len(ownerFields) {
			return nil, fmt.Errorf("array of %d elements, want %d", len(elems), len(ownerFields))
		}
		for i, e := range elems {
			fields[ownerFields[i]] = e
		}
	default:
		return nil, errors.New("not a JSON object")
	}

	var o Owner
	d := fieldDecoder{fields: fields}
	o.SchemaVersion = d.u32("schema_version")
	if sid := d.str("session_id"); d.err == nil {
		id, err := ParseID(sid)
		if err != nil {
			d.fail("session_id", err)
		}
		o.SessionID = id
	}
	o.LeaseToken = d.str("lease_token")
	o.PID = d.u32("pid")
	o.StorageWriterEpoch = d.optU32("storage_writer_epoch")
	o.DaemonNamespace = d.optStr("daemon_namespace")
	o.BuildFingerprint = d.optStr("build_fingerprint")
	o.ProtocolVersion = d.optU32("protocol_version")
	o.Endpoint = d.optStr("endpoint")
	o.ExecutablePath = d.optStr("executable_path")
	o.DaemonInstanceID = d.optStr("daemon_instance_id")
	o.AcquiredAtMs = d.u64("acquired_at_ms")
	o.LastSeenMs = d.u64("last_seen_ms")
	if d.err != nil {
		return nil, d.err
	}
	return &o, nil
}

type fieldDecoder struct {
	fields map[string]json.RawMessage
	err    error
}

func (d *fieldDecoder) fail(name string, err error) {
	if d.err == nil {
		d.err = fmt.Errorf("field %s: %w", name, err)
	}
}

// raw returns the field's value, nil for null or absent when optional.
func (d *fieldDecoder) raw(name string, optional bool) json.RawMessage {
	r, ok := d.fields[name]
	if !ok {
		if !optional {
			d.fail(name, errors.New("missing"))
		}
		return nil
	}
	if string(r) == "null" {
		if !optional {
			d.fail(name, errors.New("null where a value is required"))
		}
		return nil
	}
	return r
}

func (d *fieldDecoder) uint(name string, optional bool, bits int) (uint64, bool) {
	r := d.raw(name, optional)
	if r == nil {
		return 0, false
	}
	n, err := strconv.ParseUint(string(r), 10, bits)
	if err != nil {
		d.fail(name, fmt.Errorf("want a u%d integer, have %s", bits, r))
		return 0, false
	}
	return n, true
}

func (d *fieldDecoder) u32(name string) uint32 {
	n, _ := d.uint(name, false, 32)
	return uint32(n)
}

func (d *fieldDecoder) u64(name string) uint64 {
	n, _ := d.uint(name, false, 64)
	return n
}

func (d *fieldDecoder) optU32(name string) *uint32 {
	n, ok := d.uint(name, true, 32)
	if !ok {
		return nil
	}
	v := uint32(n)
	return &v
}

func (d *fieldDecoder) string(name string, optional bool) (string, bool) {
	r := d.raw(name, optional)
	if r == nil {
		return "", false
	}
	if r[0] != '"' {
		d.fail(name, fmt.Errorf("want a string, have %s", r))
		return "", false
	}
	var s string
	if err := json.Unmarshal(r, &s); err != nil {
		d.fail(name, err)
		return "", false
	}
	return s, true
}

func (d *fieldDecoder) str(name string) string {
	s, _ := d.string(name, false)
	return s
}

func (d *fieldDecoder) optStr(name string) *string {
	s, ok := d.string(name, true)
	if !ok {
		return nil
	}
	return &s
}
