package session

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/internal/seedharness"
)

// TestDifferentialAgainstSerdeJSON compares EncodeOwner and DecodeOwner with
// the real serde_json on the seed's struct (testdata/serdecheck, see its
// README). The harness is $LEASEWRAP_SERDECHECK, else the one `make
// harnesses` builds; without it the test skips, and fails under CI. The
// golden bytes it produced are checked unconditionally in
// record_json_test.go.
func TestDifferentialAgainstSerdeJSON(t *testing.T) {
	bin := seedharness.Bin(t, "LEASEWRAP_SERDECHECK", "serdecheck", "serdecheck")
	serde := func(mode string, in []byte) string {
		cmd := exec.Command(bin, mode)
		cmd.Stdin = bytes.NewReader(in)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("serdecheck: %v", err)
		}
		return string(out)
	}
	sid := MustParseID("5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42")
	for name, o := range encodeCases(sid) {
		t.Run("encode/"+name, func(t *testing.T) {
			ours, err := EncodeOwner(&o)
			if err != nil {
				t.Fatal(err)
			}
			if theirs := serde("encode", ours); theirs != string(ours) {
				t.Errorf("want serde's bytes\n%q\nhave\n%q", theirs, ours)
			}
		})
	}
	for i, in := range decodeCases() {
		t.Run("decode/"+itoa(uint32(i)), func(t *testing.T) {
			theirs := serde("decode", []byte(in))
			_, err := DecodeOwner([]byte(in))
			switch {
			case theirs == "ok" && err != nil:
				t.Errorf("serde decodes %q, we refuse: %v", in, err)
			case theirs != "ok" && err == nil:
				t.Errorf("serde refuses %q (%s), we decode it", in, theirs)
			}
		})
	}
}

// encodeCases are owners whose encoding must match serde byte for byte.
func encodeCases(sid ID) map[string]Owner {
	full := Owner{
		SchemaVersion:      3,
		SessionID:          sid,
		LeaseToken:         "4242-1700000000123-" + sid.String(),
		PID:                4242,
		StorageWriterEpoch: Some(uint32(6)),
		DaemonNamespace:    Some("ns"),
		BuildFingerprint:   Some("build-1"),
		ProtocolVersion:    Some(uint32(2)),
		Endpoint:           Some("unix:///run/bcode.sock"),
		ExecutablePath:     Some("/usr/bin/bcode"),
		DaemonInstanceID:   Some("daemon-1"),
		AcquiredAtMs:       1700000000123,
		LastSeenMs:         1700000000123,
	}
	nulls := Owner{SchemaVersion: 3, SessionID: sid, LeaseToken: "t", PID: 1, AcquiredAtMs: 0, LastSeenMs: 18446744073709551615}
	escapes := full
	escapes.DaemonNamespace = Some("quote\" back\\ slash/ <html>&'")
	escapes.BuildFingerprint = Some("\x00\x01\b\t\n\v\f\r\x1b\x1f\x7f")
	escapes.Endpoint = Some("é ü 日本 😀 \u2028\u2029 \ufeff")
	escapes.DaemonInstanceID = Some("")
	escapes.PID = 4294967295
	escapes.StorageWriterEpoch = Some(uint32(0))
	return map[string]Owner{"full": full, "nulls": nulls, "escapes": escapes}
}

// decodeCases are inputs on which DecodeOwner must accept exactly what
// serde accepts (valid session ids throughout: our id check is stricter by
// design and tested separately).
func decodeCases() []string {
	sid := `"5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42"`
	base := func(extra string) string {
		return `{"schema_version":3,"session_id":` + sid + `,"lease_token":"t","pid":1` + extra + `,"acquired_at_ms":1,"last_seen_ms":2}`
	}
	return []string{
		base(""),
		base(`,"storage_writer_epoch":null`),
		base(`,"storage_writer_epoch":6`),
		base(`,"storage_writer_epoch":-1`),
		base(`,"storage_writer_epoch":6.0`),
		base(`,"storage_writer_epoch":1e1`),
		base(`,"storage_writer_epoch":4294967296`),
		base(`,"storage_writer_epoch":"6"`),
		base(`,"pid":2`),
		base(`,"PID":2`),
		base(`,"unknown":{"deep":[1,2,{"x":null}]}`),
		base(`,"unknown":1,"unknown":2`),
		base(`,"endpoint":"a\ud83d\ude00b"`),
		base(`,"endpoint":"a\ud83db"`),
		base(`,"endpoint":"a\ude00b"`),
		base(`,"endpoint":"\u00e9\n"`),
		base(`,"endpoint":null`),
		base(`,"endpoint":5`),
		base(`,"executable_path":"/x"`),
		base(`,"daemon_instance_id":""`),
		base(`,"pi\u0064":1`),
		`{"schema_version":3,"session_id":` + sid + `,"lease_token":"t","pid":1,"acquired_at_ms":1}`,
		`{"schema_version":3,"session_id":` + sid + `,"lease_token":null,"pid":1,"acquired_at_ms":1,"last_seen_ms":2}`,
		`{"schema_version":3,"session_id":` + sid + `,"lease_token":"t","pid":-0,"acquired_at_ms":1,"last_seen_ms":2}`,
		`{"schema_version":3,"session_id":` + sid + `,"lease_token":"t","pid":1,"acquired_at_ms":18446744073709551615,"last_seen_ms":18446744073709551616}`,
		`  ` + base("") + "\n\t ",
		base("") + ` x`,
		base("") + `{}`,
		`[3,` + sid + `,"t",1,null,null,null,null,null,null,null,1,2]`,
		`[3,` + sid + `,"t",1,6,"n","b",2,"e","/p","i",1,2]`,
		`[3,` + sid + `,"t",1,null,null,null,null,null,null,null,1]`,
		`[3,` + sid + `,"t",1,null,null,null,null,null,null,null,1,2,3]`,
		`"string"`,
		`null`,
		`{}`,
		``,
		"\xef\xbb\xbf" + base(""),
		`{"schema_version":3,"session_id":` + sid + `,"lease_token":"t\x01","pid":1,"acquired_at_ms":1,"last_seen_ms":2}`,
		base(`,"unknown":` + strings.Repeat("[", 126) + strings.Repeat("]", 126)),
		base(`,"unknown":` + strings.Repeat("[", 127) + strings.Repeat("]", 127)),
		base(`,"unknown":` + strings.Repeat("[", 200) + strings.Repeat("]", 200)),
		base(`,"endpoint":` + strings.Repeat("[", 200) + strings.Repeat("]", 200)),
		base(`,"unknown":1e400`),
	}
}
