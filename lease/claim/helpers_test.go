package claim

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// testEnv is a fixed environment: no ambient harness markers, no
// FNO_EVENTS_PATH, no global roots.
func testEnv(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// newTestClaims is a Claims rooted in a fresh temp dir whose events land
// in the same dir (the seed's opts_in).
func newTestClaims(t *testing.T) (*Claims, string) {
	t.Helper()
	root := t.TempDir()
	return New(Options{Root: root, EventsDir: root, Getenv: testEnv(nil)}), root
}

func lockfile(t *testing.T, root, key string) string {
	t.Helper()
	return claimFile(root, key)
}

func readEvents(t *testing.T, root string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(root, ".fno", "events.jsonl"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("event line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func readClaim(t *testing.T, root, key string) *Record {
	t.Helper()
	rec, err := readClaimFile(lockfile(t, root, key))
	if err != nil {
		t.Fatalf("read claim %s: %v", key, err)
	}
	return rec
}

func mustAcquire(t *testing.T, c *Claims, key, holder string, o AcquireOptions) *Record {
	t.Helper()
	acq, err := c.Acquire(t.Context(), key, holder, o)
	if err != nil {
		t.Fatalf("acquire %s as %s: want acquired, have %v", key, holder, err)
	}
	return acq.Record
}

// record is the seed's fixture: no machine id, so the host arm decides.
func record(pid int, acquiredAt int64, expiresAt *int64, host string) *Record {
	return &Record{SchemaVersion: 1, Key: "session:x", Holder: "h", AcquiredAt: acquiredAt, PID: pid, Host: host, ExpiresAt: expiresAt}
}

func writeRecord(t *testing.T, path string, rec *Record) {
	t.Helper()
	b, err := marshalRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// ageDir backdates a path's mtime (without following a symlink), which
// is what the steal predicate reads.
func ageDir(t *testing.T, path string, by time.Duration) {
	t.Helper()
	ts := unix.NsecToTimespec(time.Now().Add(-by).UnixNano())
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		t.Fatalf("age %s: %v", path, err)
	}
}

func nowMs() int64 { return time.Now().UnixMilli() }
