package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The golden files were written by the real serde_json
// (serde_json::to_vec_pretty on the seed's struct, testdata/serdecheck).
func TestEncodeOwnerMatchesSerdeGolden(t *testing.T) {
	sid := MustParseID("5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42")
	for name, o := range encodeCases(sid) {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "owner_"+name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			have, err := EncodeOwner(&o)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(have, want) {
				t.Errorf("want serde's bytes\n%s\nhave\n%s", want, have)
			}
			back, err := DecodeOwner(want)
			if err != nil {
				t.Fatalf("want the golden record to decode, have %v", err)
			}
			again, _ := EncodeOwner(back)
			if !bytes.Equal(again, want) {
				t.Errorf("want decode+encode to round-trip, have\n%s", again)
			}
		})
	}
}

func TestEncodeOwnerRefusesInvalidUTF8Path(t *testing.T) {
	o := Owner{SchemaVersion: 3, SessionID: NewID(), LeaseToken: "t", ExecutablePath: Some("/bin/\xff")}
	if _, err := EncodeOwner(&o); err == nil || !strings.Contains(err.Error(), "invalid UTF-8") {
		t.Fatalf("want an invalid UTF-8 error, have %v", err)
	}
}

func TestPublishedRecordIsTheEncodedOwner(t *testing.T) {
	s := NewStore(t.TempDir())
	sid := NewID()
	g := mustAcquire(t, s, sid, testContext("bytes", CurrentWriterEpoch))
	onDisk, err := os.ReadFile(g.Path())
	if err != nil {
		t.Fatal(err)
	}
	o := g.Owner()
	want, _ := EncodeOwner(&o)
	if !bytes.Equal(onDisk, want) {
		t.Errorf("want the record bytes\n%s\nhave\n%s", want, onDisk)
	}
	wantName := o.LeaseToken + ".json"
	if filepath.Base(g.Path()) != wantName {
		t.Errorf("want record name %s, have %s", wantName, filepath.Base(g.Path()))
	}
	wantToken := itoa(uint32(os.Getpid())) + "-" + fmtUint(o.AcquiredAtMs) + "-" + sid.String()
	if o.LeaseToken != wantToken {
		t.Errorf("want token %s, have %s", wantToken, o.LeaseToken)
	}
	if o.AcquiredAtMs != o.LastSeenMs {
		t.Errorf("want last_seen_ms = acquired_at_ms, have %d and %d", o.LastSeenMs, o.AcquiredAtMs)
	}
	exe, _ := os.Readlink("/proc/self/exe")
	if o.ExecutablePath == nil || *o.ExecutablePath != exe {
		t.Errorf("want executable_path %s by default, have %v", exe, o.ExecutablePath)
	}
	if *o.ProtocolVersion != 2 || o.DaemonNamespace != nil || o.Endpoint != nil {
		t.Errorf("want the context's fields and nulls, have %+v", o)
	}
}

func TestDecodeOwnerRejects(t *testing.T) {
	sid := `"5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42"`
	tests := []struct{ name, in string }{
		{"not json", "not-json"},
		{"uppercase session id", `{"schema_version":3,"session_id":"5F0C6D4E-3B1A-4F59-9B8E-0D7F2A9C1E42","lease_token":"t","pid":1,"acquired_at_ms":1,"last_seen_ms":2}`},
		{"missing last_seen_ms", `{"schema_version":3,"session_id":` + sid + `,"lease_token":"t","pid":1,"acquired_at_ms":1}`},
		{"duplicate pid", `{"schema_version":3,"session_id":` + sid + `,"lease_token":"t","pid":1,"pid":2,"acquired_at_ms":1,"last_seen_ms":2}`},
		{"case-folded field", `{"Schema_Version":3,"session_id":` + sid + `,"lease_token":"t","pid":1,"acquired_at_ms":1,"last_seen_ms":2}`},
		{"negative pid", `{"schema_version":3,"session_id":` + sid + `,"lease_token":"t","pid":-1,"acquired_at_ms":1,"last_seen_ms":2}`},
		{"null token", `{"schema_version":3,"session_id":` + sid + `,"lease_token":null,"pid":1,"acquired_at_ms":1,"last_seen_ms":2}`},
		{"lone surrogate", `{"schema_version":3,"session_id":` + sid + `,"lease_token":"\ud800","pid":1,"acquired_at_ms":1,"last_seen_ms":2}`},
		{"invalid utf-8", "{\"schema_version\":3,\"session_id\":" + sid + ",\"lease_token\":\"\xff\",\"pid\":1,\"acquired_at_ms\":1,\"last_seen_ms\":2}"},
		{"trailing data", `{"schema_version":3,"session_id":` + sid + `,"lease_token":"t","pid":1,"acquired_at_ms":1,"last_seen_ms":2} x`},
		{"short array", `[3,` + sid + `,"t",1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := DecodeOwner([]byte(tt.in))
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("want ErrCorrupt, have %+v, %v", o, err)
			}
		})
	}
}

func TestParseID(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42", true},
		{"00000000-0000-0000-0000-000000000000", true},
		{"5F0C6D4E-3B1A-4F59-9B8E-0D7F2A9C1E42", false},
		{"5f0c6d4e3b1a4f599b8e0d7f2a9c1e42", false},
		{"{5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42}", false},
		{"urn:uuid:5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42", false},
		{"../../../../etc/passwd-00000000000000000", false},
		{"5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e4g", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			id, err := ParseID(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("want ok=%v, have %v", tt.ok, err)
			}
			if err != nil && !errors.Is(err, ErrInvalidID) {
				t.Errorf("want ErrInvalidID, have %v", err)
			}
			if err == nil && id.String() != tt.in {
				t.Errorf("want %s, have %s", tt.in, id)
			}
		})
	}
	if _, err := ParseID(NewID().String()); err != nil {
		t.Errorf("want NewID canonical, have %v", err)
	}
}

func TestFileNameRules(t *testing.T) {
	for name, want := range map[string]bool{
		"a.json": true, "..json": true, ".json": false, "a.json.tmp-a": false,
		"a.JSON": false, "json": false, "a.b.json": true, "..": false,
	} {
		if have := hasJSONExt(name); have != want {
			t.Errorf("hasJSONExt(%q): want %v, have %v", name, want, have)
		}
	}
	if have, want := tempPath("/r/leases/s/tok.json", "tok"), "/r/leases/s/tok.json.tmp-tok"; have != want {
		t.Errorf("want temp path %s, have %s", want, have)
	}
}
