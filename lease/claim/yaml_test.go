package claim

import (
	"errors"
	"fmt"
	"math/big"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestPIDClaimOmitsExpiresAtEntirely(t *testing.T) {
	c, root := newTestClaims(t)
	mustAcquire(t, c, "session:u1", "pty:aa", AcquireOptions{})
	text, err := os.ReadFile(lockfile(t, root, "session:u1"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(text), "expires_at") {
		t.Errorf("PID claim must omit expires_at, have:\n%s", text)
	}
	if !strings.Contains(string(text), "schema_version: 1\n") {
		t.Errorf("want schema_version: 1, have:\n%s", text)
	}
}

func TestTTLClaimSerializesIntegerExpiresAt(t *testing.T) {
	c, root := newTestClaims(t)
	rec := mustAcquire(t, c, "session:u2", "pty:bb", AcquireOptions{TTLMs: 60_000})
	if rec.ExpiresAt == nil || *rec.ExpiresAt != rec.AcquiredAt+60_000 {
		t.Fatalf("want expires_at = acquired_at+60000, have %v", rec.ExpiresAt)
	}
	text, _ := os.ReadFile(lockfile(t, root, "session:u2"))
	if want := fmt.Sprintf("expires_at: %d\n", *rec.ExpiresAt); !strings.Contains(string(text), want) {
		t.Errorf("want %q in:\n%s", want, text)
	}
}

func TestReaderTreatsNullAndAbsentExpiresAtTheSame(t *testing.T) {
	for _, text := range []string{
		"schema_version: 1\nkey: k\nholder: h\nacquired_at: 5\npid: 1\nhost: x\nexpires_at: null\n",
		"schema_version: 1\nkey: k\nholder: h\nacquired_at: 5\npid: 1\nhost: x\n",
	} {
		rec, reason := parseRecord([]byte(text))
		if reason != "" || rec.ExpiresAt != nil {
			t.Errorf("want parsed with no expires_at, have %+v (%s)", rec, reason)
		}
	}
}

func TestReaderIgnoresUnknownFieldsAndDefaultsSchemaVersion(t *testing.T) {
	rec, reason := parseRecord([]byte("key: k\nholder: h\nacquired_at: 5\npid: 1\nhost: x\nfuture_field: [1, 2]\n"))
	if reason != "" {
		t.Fatalf("unknown fields must be ignored: %s", reason)
	}
	if rec.SchemaVersion != 1 || len(rec.Metadata) != 0 {
		t.Errorf("want schema 1 and no metadata, have %d, %v", rec.SchemaVersion, rec.Metadata)
	}
}

func TestReaderRejectsNewerSchemaNonDictAndGarbageAsCorrupted(t *testing.T) {
	for _, text := range []string{
		"schema_version: 2\nkey: k\nholder: h\nacquired_at: 5\npid: 1\nhost: x\n",
		"- just\n- a\n- list\n",
		"{{{{not yaml",
		"key: ''\nholder: h\nacquired_at: 5\npid: 1\nhost: x\n",
		"",
		"key: k\nholder: h\nacquired_at: soon\npid: 1\nhost: x\n",
	} {
		t.Run(text, func(t *testing.T) {
			path := t.TempDir() + "/c.lock"
			os.WriteFile(path, []byte(text), 0o644)
			_, err := readClaimFile(path)
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Path != path {
				t.Errorf("want *CorruptError naming %s, have %v", path, err)
			}
		})
	}
}

func TestMetadataSurvivesYAMLRoundtrip(t *testing.T) {
	meta := Metadata{
		{Key: "nested", Value: Metadata{{Key: "a", Value: []any{big.NewInt(1), big.NewInt(2)}}, {Key: "b", Value: "text"}}},
		{Key: "flag", Value: true},
	}
	rec := &Record{SchemaVersion: 1, Key: "session:u", Holder: "h", AcquiredAt: 42, PID: 7, Host: "hh",
		Reason: strPtr("why"), Harness: strPtr("codex"), MachineID: strPtr("mid"), Metadata: meta}
	text, err := marshalRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	back, reason := parseRecord(text)
	if reason != "" {
		t.Fatalf("parse back: %s\n%s", reason, text)
	}
	if !reflect.DeepEqual(back, rec) {
		t.Errorf("want %+v, have %+v", rec, back)
	}
}

func TestClaimWithoutHarnessKeyReadsNone(t *testing.T) {
	rec, reason := parseRecord([]byte("schema_version: 1\nkey: node:x\nholder: h\nacquired_at: 1\npid: 2\nhost: hh\n"))
	if reason != "" || rec.Harness != nil {
		t.Errorf("want legacy record with no harness, have %+v (%s)", rec, reason)
	}
}

func TestClaimWithHarnessKeyRoundTrips(t *testing.T) {
	rec, reason := parseRecord([]byte("schema_version: 1\nkey: node:x\nholder: h\nacquired_at: 1\npid: 2\nhost: hh\nharness: codex\n"))
	if reason != "" || rec.Harness == nil || *rec.Harness != "codex" {
		t.Fatalf("want harness codex, have %+v (%s)", rec, reason)
	}
	rec.Harness = nil
	text, _ := marshalRecord(rec)
	if strings.Contains(string(text), "harness") {
		t.Errorf("nil harness must be omitted, have:\n%s", text)
	}
}
