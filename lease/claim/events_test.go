package claim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEventEnvelopeIsExactCompactJSON(t *testing.T) {
	c, root := newTestClaims(t)
	fixed := time.Date(2026, 5, 9, 7, 30, 1, 999e6, time.UTC)
	c.now = func() time.Time { return fixed }
	c.hostname = func() string { return "box" }
	c.machineID = func() string { return "" }
	mustAcquire(t, c, "session:e", "pty:<&>", AcquireOptions{PID: 77, TTLMs: 60_000, Reason: "é"})
	b, err := os.ReadFile(filepath.Join(root, ".fno", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	ms := fixed.UnixMilli()
	want := fmt.Sprintf(`{"ts":"2026-05-09T07:30:01Z","type":"claim_acquired","source":"fno-loop","data":{"key":"session:e","holder":"pty:<&>","pid":77,"host":"box","acquired_at":%d,"expires_at":%d,"reason":"é"}}`+"\n", ms, ms+60_000)
	if string(b) != want {
		t.Errorf("want\n%s\nhave\n%s", want, b)
	}
}

func TestEventsPathRouting(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name      string
		env       map[string]string
		eventsDir string
		want      string
	}{
		{"default is the current directory", nil, "", filepath.Join(".", ".fno", "events.jsonl")},
		{"events dir", nil, dir, filepath.Join(dir, ".fno", "events.jsonl")},
		{"FNO_EVENTS_PATH wins", map[string]string{"FNO_EVENTS_PATH": "/x/e.jsonl"}, dir, "/x/e.jsonl"},
		{"empty FNO_EVENTS_PATH is unset", map[string]string{"FNO_EVENTS_PATH": ""}, dir, filepath.Join(dir, ".fno", "events.jsonl")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(Options{EventsDir: tc.eventsDir, Getenv: testEnv(tc.env)})
			if have := c.EventsPath(); have != tc.want {
				t.Errorf("want %s, have %s", tc.want, have)
			}
		})
	}
}

func TestFailedEventAppendIsNotFatal(t *testing.T) {
	root := t.TempDir()
	// The events path is under a regular file: the append must fail.
	blocker := filepath.Join(root, "blocker")
	os.WriteFile(blocker, nil, 0o644)
	var logged strings.Builder
	c := New(Options{Root: root, Getenv: testEnv(map[string]string{"FNO_EVENTS_PATH": filepath.Join(blocker, "events.jsonl")}),
		Logger: newTextLogger(&logged)})
	if _, err := c.Acquire(t.Context(), "session:e", "h", AcquireOptions{}); err != nil {
		t.Fatalf("want acquired despite the failed audit append, have %v", err)
	}
	if !strings.Contains(logged.String(), "failed to emit audit event") {
		t.Errorf("want the failure logged, have %q", logged.String())
	}
}
