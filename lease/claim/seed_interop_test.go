package claim

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/internal/seedharness"
	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/lease"
)

// seedClaimMetadata exercises what YAML and JSON disagree on: YAML 1.1
// booleans and sexagesimals, the null tilde, non-ASCII, quotes, nesting,
// integers, floats, null and the empty string.
const seedClaimMetadata = `{"ticket":"yes","at":"1:20","tilde":"~","text":"é 日本 \"q\" 'a'","nested":{"list":[1,"x",null,true,-3]},"n":42,"f":1.5,"empty":""}`

// TestSeedClaimInterop runs the claims seed's own code (fno-agents'
// claims.rs, seed 003) against this package on one claims root, in both
// directions: records each side writes are read by the other with the same
// values, and each side respects the other's live claims and reclaims its
// dead ones. It is "seed code plus shims": Debian has no serde_yaml_ng, so
// the seed writes and reads YAML with serde_yaml 0.8 through a shim
// (testdata/claimcheck/README.md). The shim's bytes differ from
// serde_yaml_ng's, so records are compared by value, never by bytes.
//
// The harness is $LEASEWRAP_CLAIMRS, else the one `make harnesses` builds;
// without it the test skips, and fails under CI.
func TestSeedClaimInterop(t *testing.T) {
	bin := seedharness.Bin(t, "LEASEWRAP_CLAIMRS", "claimcheck", "claimrs")
	ctx := t.Context()

	for _, ttl := range []int64{0, 120_000} {
		t.Run("seed claim read and respected by Go/ttl="+strconv.FormatInt(ttl, 10), func(t *testing.T) {
			root := t.TempDir()
			c := New(Options{Root: root, EventsDir: root, Getenv: testEnv(nil)})
			key := "session:seed-held"
			hold := startClaimSeed(t, bin, "acquire", root, key, "h-seed", strconv.FormatInt(ttl, 10), "0", seedClaimMetadata, "hold")
			line := hold.Line(t, seedharness.Within)
			seedRec, ok := strings.CutPrefix(line, "acquired ")
			if !ok {
				t.Fatalf("want the seed to acquire, have %q", line)
			}
			st := c.Status(key)
			if st.State != Live || st.Record == nil {
				t.Fatalf("want the seed's claim live for Go, have %s (%v)", st.State, st.Err)
			}
			sameClaimValues(t, "seed record read by Go", []byte(seedRec), st.Record)
			if ttl != 0 && (st.Record.ExpiresAt == nil || *st.Record.ExpiresAt != st.Record.AcquiredAt+ttl) {
				t.Errorf("want expires_at = acquired_at + %d, have %v", ttl, st.Record.ExpiresAt)
			}

			_, err := c.Acquire(ctx, key, "h-go", AcquireOptions{})
			var other *HeldByOtherError
			if !errors.As(err, &other) || other.Holder != "h-seed" {
				t.Errorf("want Go's acquire refused as held by h-seed, have %v", err)
			}
			l, err := NewLocker(LockerConfig{Key: key, Holder: "h-go", Root: root, EventsDir: root, Getenv: testEnv(nil)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.AcquireAnchored(ctx, os.Getpid()); !errors.Is(err, lease.ErrHeld) {
				t.Errorf("want the claim Locker to see the seed's claim held, have %v", err)
			}
			if ttl != 0 {
				if res, err := c.Renew(ctx, key, "h-seed", ttl); err != nil || res != Renewed {
					t.Errorf("want Go to renew the seed's TTL claim for its holder, have %s (%v)", res, err)
				}
				out, _ := runClaimSeed(t, bin, "status", root, key)
				if rec := mustParseState(t, out, "live"); rec["acquired_at"] != json.Number(strconv.FormatInt(st.Record.AcquiredAt, 10)) {
					t.Errorf("want acquired_at kept by Go's renewal, have %v", rec["acquired_at"])
				}
			}

			hold.Stdin.Close()
			if line := hold.Line(t, seedharness.Within); line != "released" {
				t.Fatalf("want the seed to release, have %q", line)
			}
			if st := c.Status(key); st.State != Free {
				t.Errorf("want the key free after the seed released, have %s", st.State)
			}
			mustAcquire(t, c, key, "h-go", AcquireOptions{})
			if err := c.Release(ctx, key, "h-go"); err != nil {
				t.Fatal(err)
			}
			wantEventsParse(t, root)
		})
	}

	t.Run("Go claim read and respected by the seed", func(t *testing.T) {
		root := t.TempDir()
		c := New(Options{Root: root, EventsDir: root, Getenv: testEnv(nil)})
		key := "session:go-held"
		meta, err := ParseMetadataJSON([]byte(seedClaimMetadata))
		if err != nil {
			t.Fatal(err)
		}
		rec := mustAcquire(t, c, key, "h-go", AcquireOptions{TTLMs: 120_000, Reason: "interop: ünïcode", Metadata: meta})
		out, code := runClaimSeed(t, bin, "status", root, key)
		if code != 0 {
			t.Fatalf("seed status: exit %d: %s", code, out)
		}
		theirs := mustParseState(t, out, "live")
		sameClaimValues(t, "Go record read by the seed", mustJSON(t, theirs), rec)
		path, _ := c.Path(key)
		if out, code := runClaimSeed(t, bin, "read", path); code != 0 {
			t.Errorf("want the seed's reader to accept our file, have %s", out)
		}

		out, code = runClaimSeed(t, bin, "acquire", root, key, "h-seed", "0", "0", "")
		if code != 3 || !strings.HasPrefix(out, "held h-go ") {
			t.Errorf("want the seed refused by our live claim, have exit %d: %s", code, out)
		}
		if out, _ := runClaimSeed(t, bin, "renew", root, key, "h-go", "60000"); out != "true" {
			t.Errorf("want the seed to renew our TTL claim for its holder, have %q", out)
		}
		after := c.Status(key)
		if after.Record == nil || after.Record.AcquiredAt != rec.AcquiredAt || after.Record.ExpiresAt == nil ||
			*after.Record.ExpiresAt == *rec.ExpiresAt {
			t.Errorf("want the seed's renewal to move expires_at and keep acquired_at, have %+v", after.Record)
		} else if got, _ := after.Record.Metadata.MarshalJSON(); !sameJSONValues(t, got, []byte(seedClaimMetadata)) {
			t.Errorf("want metadata kept through the seed's rewrite, have %s", got)
		}

		if err := c.Release(ctx, key, "h-go"); err != nil {
			t.Fatal(err)
		}
		out, code = runClaimSeed(t, bin, "acquire", root, key, "h-seed", "0", "0", "")
		if code != 0 {
			t.Fatalf("want the seed to acquire after our release, have exit %d: %s", code, out)
		}
		wantEventsParse(t, root)
	})

	t.Run("dead holders are reclaimed across implementations", func(t *testing.T) {
		root := t.TempDir()
		c := New(Options{Root: root, EventsDir: root, Getenv: testEnv(nil)})
		// The seed's claim is kept by the seed process, which exits at once:
		// a PID claim of a dead process, stale for Go.
		key := "session:seed-dead"
		out, code := runClaimSeed(t, bin, "acquire", root, key, "h-seed", "0", "0", "")
		if code != 0 {
			t.Fatalf("seed acquire: exit %d: %s", code, out)
		}
		var dead struct{ PID int }
		json.Unmarshal([]byte(strings.TrimPrefix(out, "acquired ")), &dead)
		if st := c.Status(key); st.State != Stale {
			t.Fatalf("want the exited seed's claim stale for Go, have %s", st.State)
		}
		acq, err := c.Acquire(ctx, key, "h-go", AcquireOptions{})
		if err != nil || acq.Event != EventStaleReclaimed {
			t.Fatalf("want Go to reclaim the dead seed's claim, have %+v (%v)", acq, err)
		}
		if archived, _ := filepath.Glob(filepath.Join(root, ".fno", "claims", ".expired", "*.lock")); len(archived) != 1 {
			t.Errorf("want the seed's claim archived in .expired, have %v", archived)
		}

		// Go's claim names the same dead pid: stale for the seed.
		key = "session:go-dead"
		mustAcquire(t, c, key, "h-go", AcquireOptions{PID: dead.PID})
		out, _ = runClaimSeed(t, bin, "status", root, key)
		mustParseState(t, out, "stale")
		out, code = runClaimSeed(t, bin, "acquire", root, key, "h-seed", "0", "0", "")
		if code != 0 {
			t.Fatalf("want the seed to reclaim Go's dead claim, have exit %d: %s", code, out)
		}
		if st := c.Status(key); st.Record == nil || st.Record.Holder != "h-seed" {
			t.Errorf("want the seed's reclaim visible to Go, have %+v", st)
		}
		wantEventsParse(t, root)
	})
}

// claimSeedEnv is the environment without the agent-harness markers, so
// that the seed's harness field is as deterministic as ours.
func claimSeedEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "CODEX_THREAD_ID", "CLAUDE_CODE_SESSION_ID", "CODEX_SESSION_ID", "GEMINI_SESSION_ID",
			"OPENCODE_SESSION_ID", "FNO_EVENTS_PATH", "FNO_CLAIMS_ROOT":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// runClaimSeed runs one seed command to its end and returns its output
// and exit code.
func runClaimSeed(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = claimSeedEnv()
	return seedharness.Run(t, cmd)
}

// startClaimSeed starts a seed command that holds its claim until stdin
// closes.
func startClaimSeed(t *testing.T, bin string, args ...string) *testutil.Proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = claimSeedEnv()
	return seedharness.Start(t, cmd)
}

// sameClaimValues compares a record as the seed printed it (serde_json of
// its ClaimRecord) with ours, by value: field names, presence and values,
// metadata included, regardless of key order and number spelling.
func sameClaimValues(t *testing.T, what string, seedJSON []byte, rec *Record) {
	t.Helper()
	ours, err := rec.Fields().MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSONValues(t, seedJSON, ours) {
		t.Errorf("%s: values differ\nseed: %s\nours: %s", what, seedJSON, ours)
	}
}

func sameJSONValues(t *testing.T, a, b []byte) bool {
	t.Helper()
	return reflect.DeepEqual(decodeJSONValue(t, a), decodeJSONValue(t, b))
}

func decodeJSONValue(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("JSON %s: %v", b, err)
	}
	return normalizeNumbers(v)
}

// normalizeNumbers makes 1.5 and 1.50 (or 42 and 42.0 from a YAML float)
// compare by their value; integers stay exact.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return x.String()
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// mustParseState decodes the seed's status line and checks its state.
func mustParseState(t *testing.T, out, want string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(out))
	d.UseNumber()
	var st struct {
		State  string
		Record map[string]any
	}
	if err := d.Decode(&st); err != nil {
		t.Fatalf("seed status %q: %v", out, err)
	}
	if st.State != want {
		t.Errorf("want the seed to classify the claim %s, have %s (%s)", want, st.State, out)
	}
	return st.Record
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantEventsParse checks that the audit log both sides appended to is
// whole JSON lines of the shared envelope.
func wantEventsParse(t *testing.T, root string) {
	t.Helper()
	evs := readEvents(t, root)
	if len(evs) == 0 {
		t.Error("want audit events from both sides, have none")
	}
	for _, ev := range evs {
		if ev["source"] != "fno-loop" || ev["type"] == nil || ev["data"] == nil {
			t.Errorf("want the shared event envelope, have %v", ev)
		}
	}
}
