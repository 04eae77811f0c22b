package reserve

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func u64(v uint64) *uint64 { return &v }

// The bytes serde_json::to_vec writes for orchestratectl's structs.
func TestRecordMarshalIsSerdeExact(t *testing.T) {
	at := time.Date(2026, 11, 29, 17, 30, 7, 123456789, time.UTC)
	cases := []struct {
		name string
		rec  *Record
		want string
	}{
		{
			name: "new record",
			rec:  NewRecord("01jq0000000000000000000000", NewCreator(4242, u64(1764437400), at, "/h/idempotency/materializers/01jq0000000000000000000000.lease")),
			want: `{"schema_version":1,"run_id":"01jq0000000000000000000000","creator":{"pid":4242,"pid_start_secs":1764437400,"started_at":"2026-11-29T17:30:07.123456789Z","materializer_lease_path":"/h/idempotency/materializers/01jq0000000000000000000000.lease"},"stale_run_ids":[]}`,
		},
		{
			name: "nulls and stale ids",
			rec: &Record{SchemaVersion: 1, RunID: "b", StaleRunIDs: []string{"a", "z"},
				Creator: NewCreator(1, nil, at.Truncate(time.Second), "")},
			want: `{"schema_version":1,"run_id":"b","creator":{"pid":1,"pid_start_secs":null,"started_at":"2026-11-29T17:30:07Z","materializer_lease_path":null},"stale_run_ids":["a","z"]}`,
		},
		{
			name: "no creator",
			rec:  &Record{SchemaVersion: 1, RunID: "x", StaleRunIDs: []string{}},
			want: `{"schema_version":1,"run_id":"x","creator":null,"stale_run_ids":[]}`,
		},
		{
			name: "escapes like serde_json",
			rec:  NewRecord("r", NewCreator(1, nil, at.Truncate(time.Millisecond), "/a\"b\\c<&>\x01\x7f\u2028é\t\n\b\f\r")),
			want: `{"schema_version":1,"run_id":"r","creator":{"pid":1,"pid_start_secs":null,"started_at":"2026-11-29T17:30:07.123Z","materializer_lease_path":"/a\"b\\c<&>\u0001` + "\x7f\u2028é" + `\t\n\b\f\r"},"stale_run_ids":[]}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			have := string(tc.rec.Marshal())
			if have != tc.want {
				t.Fatalf("want %s\nhave %s", tc.want, have)
			}
			back, err := ParseRecord([]byte(have))
			if err != nil {
				t.Fatalf("parse back: %v", err)
			}
			if !back.Equal(tc.rec) {
				t.Fatalf("round trip: want %+v, have %+v", tc.rec, back)
			}
			if string(back.Marshal()) != have {
				t.Fatalf("re-marshal differs: %s", back.Marshal())
			}
		})
	}
}

func TestFormatTimeIsChronoAutoSi(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		ns   int
		want string
	}{
		{0, "2026-01-02T03:04:05Z"},
		{120_000_000, "2026-01-02T03:04:05.120Z"},
		{123_456_000, "2026-01-02T03:04:05.123456Z"},
		{100, "2026-01-02T03:04:05.000000100Z"},
		{123_456_780, "2026-01-02T03:04:05.123456780Z"},
	}
	for _, tc := range cases {
		if have := FormatTime(base.Add(time.Duration(tc.ns))); have != tc.want {
			t.Errorf("%d ns: want %s, have %s", tc.ns, tc.want, have)
		}
	}
	if have := FormatTime(base.In(time.FixedZone("x", 3600))); have != "2026-01-02T03:04:05Z" {
		t.Errorf("zone: want UTC, have %s", have)
	}
}

func TestParseRecord(t *testing.T) {
	const ok = `{"schema_version":1,"run_id":"r1","creator":{"pid":7,"pid_start_secs":9,"started_at":"2026-01-02T03:04:05+01:00","materializer_lease_path":"/l"},"stale_run_ids":["s"]}`
	cases := []struct {
		name    string
		in      string
		wantErr error
		check   func(*Record) string
	}{
		{name: "full record", in: ok, check: func(r *Record) string {
			if r.RunID != "r1" || r.Creator.PID != 7 || *r.Creator.PIDStartSecs != 9 || r.Creator.MaterializerLeasePath != "/l" ||
				!r.Creator.StartedAt.Equal(time.Date(2026, 1, 2, 2, 4, 5, 0, time.UTC)) || len(r.StaleRunIDs) != 1 {
				return "fields"
			}
			return ""
		}},
		{name: "optional fields missing", in: `  {"run_id":"r","schema_version":1}`, check: func(r *Record) string {
			if r.Creator != nil || len(r.StaleRunIDs) != 0 || r.StaleRunIDs == nil {
				return "defaults"
			}
			return ""
		}},
		{name: "creator optional fields missing", in: `{"schema_version":1,"run_id":"r","creator":{"pid":1,"started_at":"2026-01-02 03:04:05+0100"}}`, check: func(r *Record) string {
			if r.Creator.PIDStartSecs != nil || r.Creator.HasLeasePath() {
				return "creator defaults"
			}
			return ""
		}},
		{name: "duplicate unknown fields are ignored", in: `{"schema_version":1,"run_id":"r","u":1,"u":2}`, check: func(r *Record) string { return "" }},
		{name: "lowercase t", in: `{"schema_version":1,"run_id":"r","creator":{"pid":1,"started_at":"2026-01-02t03:04:05Z"}}`, wantErr: ErrCorrupt},
		{name: "lone surrogate", in: `{"schema_version":1,"run_id":"\ud800"}`, wantErr: ErrCorrupt},
		{name: "surrogate pair", in: `{"schema_version":1,"run_id":"\ud83d\ude00"}`, check: func(r *Record) string {
			if r.RunID != "\U0001F600" {
				return "pair"
			}
			return ""
		}},
		{name: "unknown fields kept", in: `{"schema_version":1,"future":{"a":[1]},"run_id":"r","creator":{"pid":1,"started_at":"2026-01-02T03:04:05Z","x":1}}`, check: func(r *Record) string {
			if len(r.Unknown) != 1 || r.Unknown[0].Name != "future" || r.Unknown[0].Value != `{"a":[1]}` {
				return "unknown"
			}
			return ""
		}},
		{name: "legacy", in: "  01runaaaa \n", check: func(r *Record) string {
			if !r.Legacy() || r.RunID != "01runaaaa" || r.Creator != nil {
				return "legacy"
			}
			return ""
		}},
		{name: "empty legacy", in: "", check: func(r *Record) string {
			if !r.Legacy() || r.RunID != "" {
				return "empty"
			}
			return ""
		}},
		{name: "schema 2", in: `{"schema_version":2,"run_id":"r"}`, wantErr: ErrUnsupportedSchema},
		{name: "schema 0 json", in: `{"schema_version":0,"run_id":"r"}`, wantErr: ErrUnsupportedSchema},
		{name: "missing schema", in: `{"run_id":"r"}`, wantErr: ErrCorrupt},
		{name: "missing run id", in: `{"schema_version":1}`, wantErr: ErrCorrupt},
		{name: "null run id", in: `{"schema_version":1,"run_id":null}`, wantErr: ErrCorrupt},
		{name: "float schema", in: `{"schema_version":1.0,"run_id":"r"}`, wantErr: ErrCorrupt},
		{name: "negative pid", in: `{"schema_version":1,"run_id":"r","creator":{"pid":-1,"started_at":"2026-01-02T03:04:05Z"}}`, wantErr: ErrCorrupt},
		{name: "pid over u32", in: `{"schema_version":1,"run_id":"r","creator":{"pid":4294967296,"started_at":"2026-01-02T03:04:05Z"}}`, wantErr: ErrCorrupt},
		{name: "bad time", in: `{"schema_version":1,"run_id":"r","creator":{"pid":1,"started_at":"yesterday"}}`, wantErr: ErrCorrupt},
		{name: "missing started_at", in: `{"schema_version":1,"run_id":"r","creator":{"pid":1}}`, wantErr: ErrCorrupt},
		{name: "null stale ids", in: `{"schema_version":1,"run_id":"r","stale_run_ids":null}`, wantErr: ErrCorrupt},
		{name: "duplicate field", in: `{"schema_version":1,"run_id":"r","run_id":"s"}`, wantErr: ErrCorrupt},
		{name: "trailing garbage", in: `{"schema_version":1,"run_id":"r"} x`, wantErr: ErrCorrupt},
		{name: "truncated", in: `{"schema_version":1,"run_`, wantErr: ErrCorrupt},
		{name: "not utf-8", in: "\xff\xfe", wantErr: ErrCorrupt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRecord([]byte(tc.in))
			if tc.wantErr != nil {
				if !errorsIs(err, tc.wantErr) {
					t.Fatalf("want %v, have %v (%+v)", tc.wantErr, err, r)
				}
				return
			}
			if err != nil {
				t.Fatalf("want no error, have %v", err)
			}
			if what := tc.check(r); what != "" {
				t.Fatalf("%s: have %+v", what, r)
			}
		})
	}
}

func TestRecordEqual(t *testing.T) {
	at := time.Now()
	a := NewRecord("r", NewCreator(1, u64(2), at, "/l"))
	mut := []func(*Record){
		func(r *Record) { r.RunID = "s" },
		func(r *Record) { r.Creator.PID = 9 },
		func(r *Record) { r.Creator.PIDStartSecs = nil },
		func(r *Record) { r.Creator.StartedAt = at.Add(time.Nanosecond) },
		func(r *Record) { r.Creator = NewCreator(1, u64(2), at, "") },
		func(r *Record) { r.StaleRunIDs = []string{"x"} },
		func(r *Record) { r.Creator = nil },
	}
	for i, m := range mut {
		b := NewRecord("r", NewCreator(1, u64(2), at, "/l"))
		if !a.Equal(b) {
			t.Fatal("want equal before mutation")
		}
		m(b)
		if a.Equal(b) {
			t.Errorf("mutation %d: want not equal", i)
		}
	}
	b := NewRecord("r", NewCreator(1, u64(2), at, "/l"))
	b.Unknown = []Field{{"x", "1"}}
	if !a.Equal(b) {
		t.Error("unknown fields must not matter")
	}
}

func TestValidateRunID(t *testing.T) {
	for _, id := range []string{"01jq0000000000000000000000", "01runaaaaaaaaaaaaaaaaaaaaaaaaa", "A_b-9"} {
		if err := ValidateRunID(id); err != nil {
			t.Errorf("%q: want ok, have %v", id, err)
		}
	}
	for _, id := range []string{"", "..", "a/b", "../x", "a\x00b", ".hidden", "a b", strings.Repeat("a", 129)} {
		if err := ValidateRunID(id); !errorsIs(err, ErrInvalidRunID) {
			t.Errorf("%q: want ErrInvalidRunID, have %v", id, err)
		}
	}
}

func TestNewRunIDIsLowercaseULID(t *testing.T) {
	id, err := NewRunID(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(id) != 26 || strings.Trim(id, "0123456789abcdefghjkmnpqrstvwxyz") != "" {
		t.Fatalf("want a 26-char lowercase Crockford ULID, have %q", id)
	}
	if err := ValidateRunID(id); err != nil {
		t.Fatal(err)
	}
}

// TestRunIDMatchesTheULIDSpelling: vectors produced by
// github.com/oklog/ulid/v2 (ulid.New(ulid.Timestamp(t), entropy), lower
// case), which run ids were made with before, and by orchestratectl.
func TestRunIDMatchesTheULIDSpelling(t *testing.T) {
	for _, c := range []struct {
		ms      int64
		entropy []byte
		want    string
	}{
		{0, make([]byte, 10), "00000000000000000000000000"},
		{1469918176385, bytes.Repeat([]byte{0xff}, 10), "01aryz6s41zzzzzzzzzzzzzzzz"},
		{1764597600123, []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, "01kbd3d3vv000g40r40m30e209"},
		{1<<48 - 1, []byte{0xde, 0xad, 0xbe, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab}, "7zzzzzzzzzvtpvxvr14d2pf2db"},
	} {
		have, err := newRunID(time.UnixMilli(c.ms), bytes.NewReader(c.entropy))
		if err != nil || have != c.want {
			t.Errorf("%d ms, entropy %x: want %s, have %s (%v)", c.ms, c.entropy, c.want, have, err)
		}
	}
	if _, err := newRunID(time.UnixMilli(1<<48), bytes.NewReader(make([]byte, 10))); err == nil {
		t.Error("a time past the 48-bit range: want an error")
	}
	if _, err := newRunID(time.UnixMilli(1), bytes.NewReader(make([]byte, 9))); err == nil {
		t.Error("short entropy: want an error")
	}
}

func TestResolveHome(t *testing.T) {
	cases := []struct {
		name, explicit, octl, home, want string
		wantErr                          bool
	}{
		{name: "explicit wins", explicit: "/x", octl: "/o", home: "/h", want: "/x"},
		{name: "env", octl: "/o", home: "/h", want: "/o"},
		{name: "home", home: "/h", want: "/h/.orchestratectl"},
		{name: "empty env is unset", octl: "", home: "/h", want: "/h/.orchestratectl"},
		{name: "nothing", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{HomeEnv: tc.octl, "HOME": tc.home}
			have, err := ResolveHome(tc.explicit, func(k string) string { return env[k] })
			if tc.wantErr {
				if !errorsIs(err, ErrNoHome) {
					t.Fatalf("want ErrNoHome, have %q, %v", have, err)
				}
				return
			}
			if err != nil || have != tc.want {
				t.Fatalf("want %s, have %s, %v", tc.want, have, err)
			}
		})
	}
}
