package reserve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/leasewrap/leasewrap/internal/serdejson"
)

// ParseRecord decodes a record as read_record does: content starting with "{" is
// strict JSON (else ErrCorrupt; schema_version other than 1 is
// ErrUnsupportedSchema); anything else is a legacy record (trimmed run id, schema
// 0). Content over MaxRecordBytes is ErrCorrupt unread.
func ParseRecord(raw []byte) (*Record, error) {
	if len(raw) > MaxRecordBytes {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, &tooLargeError{MaxRecordBytes})
	}
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("%w: content is not valid UTF-8", ErrCorrupt)
	}
	s := string(raw)
	if !strings.HasPrefix(strings.TrimLeftFunc(s, unicode.IsSpace), "{") {
		return &Record{SchemaVersion: 0, RunID: strings.TrimSpace(s), StaleRunIDs: []string{}}, nil
	}
	fields, err := decodeObject(raw, "schema_version", "run_id", "creator", "stale_run_ids")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	r := &Record{StaleRunIDs: []string{}}
	var haveSchema, haveRunID bool
	for _, f := range fields {
		var err error
		switch f.Name {
		case "schema_version":
			var v uint64
			v, err = parseUint(f.Value, 32)
			r.SchemaVersion, haveSchema = uint32(v), true
		case "run_id":
			r.RunID, err = parseString(f.Value)
			haveRunID = true
		case "creator":
			if f.Value != "null" {
				r.Creator, err = parseCreator([]byte(f.Value))
			}
		case "stale_run_ids":
			r.StaleRunIDs, err = parseStrings(f.Value)
		default:
			r.Unknown = append(r.Unknown, f)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: field %s: %v", ErrCorrupt, f.Name, err)
		}
	}
	switch {
	case !haveSchema:
		return nil, fmt.Errorf("%w: missing field schema_version", ErrCorrupt)
	case !haveRunID:
		return nil, fmt.Errorf("%w: missing field run_id", ErrCorrupt)
	case r.SchemaVersion != SchemaVersion:
		return nil, fmt.Errorf("%w: schema_version %d (supported: %d)", ErrUnsupportedSchema, r.SchemaVersion, SchemaVersion)
	}
	return r, nil
}

func parseCreator(raw []byte) (*Creator, error) {
	fields, err := decodeObject(raw, "pid", "pid_start_secs", "started_at", "materializer_lease_path")
	if err != nil {
		return nil, err
	}
	c := &Creator{}
	var havePID, haveStarted bool
	for _, f := range fields {
		var err error
		switch f.Name {
		case "pid":
			var v uint64
			v, err = parseUint(f.Value, 32)
			c.PID, havePID = uint32(v), true
		case "pid_start_secs":
			if f.Value != "null" {
				var v uint64
				v, err = parseUint(f.Value, 64)
				c.PIDStartSecs = &v
			}
		case "started_at":
			var s string
			if s, err = parseString(f.Value); err == nil {
				c.StartedAt, err = parseTime(s)
			}
			haveStarted = true
		case "materializer_lease_path":
			if f.Value != "null" {
				c.MaterializerLeasePath, err = parseString(f.Value)
				c.hasLeasePath = true
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", f.Name, err)
		}
	}
	switch {
	case !havePID:
		return nil, errors.New("missing field pid")
	case !haveStarted:
		return nil, errors.New("missing field started_at")
	}
	return c, nil
}

// decodeObject splits one JSON object into ordered fields (duplicate known field
// or trailing content: error).
func decodeObject(raw []byte, known ...string) ([]Field, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want a JSON object, have %v", tok)
	}
	var out []Field
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name := tok.(string) // object keys are always strings
		if seen[name] && slices.Contains(known, name) {
			return nil, fmt.Errorf("duplicate field %q", name)
		}
		seen[name] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, Field{Name: name, Value: string(v)})
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing characters after the JSON object")
	}
	return out, nil
}

func parseUint(raw string, bits int) (uint64, error) {
	v, err := strconv.ParseUint(raw, 10, bits)
	if err != nil {
		return 0, fmt.Errorf("want an unsigned %d-bit integer, have %s", bits, raw)
	}
	return v, nil
}

func parseString(raw string) (string, error) {
	if !strings.HasPrefix(raw, `"`) {
		return "", fmt.Errorf("want a string, have %s", raw)
	}
	if err := serdejson.CheckSurrogates(raw); err != nil {
		return "", err
	}
	var s string
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return "", err
	}
	return s, nil
}

func parseStrings(raw string) ([]string, error) {
	if !strings.HasPrefix(raw, "[") {
		return nil, fmt.Errorf("want an array of strings, have %s", raw)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(raw), &raws); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(raws))
	for _, r := range raws {
		s, err := parseString(string(r))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// parseTime accepts RFC 3339 as chrono does for writers' forms ("T" or space,
// "Z" or an offset with or without colon); rarer leniencies are refused.
func parseTime(s string) (time.Time, error) {
	b := []byte(s)
	if len(b) > 10 && b[10] == ' ' {
		b[10] = 'T'
	}
	if n := len(b); n > 5 && (b[n-5] == '+' || b[n-5] == '-') && isDigits(b[n-4:]) {
		b = append(b[:n-2:n-2], ':', b[n-2], b[n-1])
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return time.Time{}, fmt.Errorf("want an RFC 3339 time, have %q", s)
	}
	return t.UTC(), nil
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
