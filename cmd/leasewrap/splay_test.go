package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/supervisor"
)

// splayKey finds a lock path in dir whose splay offset under d is within
// [lo, hi): the offset is a hash of host and key, so a test picks the key
// that gives the delay it needs.
func splayKey(t *testing.T, dir string, d, lo, hi time.Duration) (string, time.Duration) {
	t.Helper()
	host, _ := os.Hostname()
	for i := range 100000 {
		p := filepath.Join(dir, fmt.Sprintf("job%d.lock", i))
		if off := supervisor.SplayOffset(host, "flock", p, d); off >= lo && off < hi {
			return p, off
		}
	}
	t.Fatalf("no key with a splay offset in [%v, %v) of %v", lo, hi, d)
	return "", 0
}

// splayLine is the JSON log line that announces the splay.
func splayLine(t *testing.T, stderr string) (delay time.Duration, ok bool) {
	t.Helper()
	for line := range strings.SplitSeq(stderr, "\n") {
		var m struct {
			Msg   string  `json:"msg"`
			Delay float64 `json:"delay"` // seconds
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Msg == "splaying the start" {
			return time.Duration(m.Delay * float64(time.Second)).Round(time.Millisecond), true
		}
	}
	return 0, false
}

// TestSplayIsSteadyPerHostAndKey runs the same key twice in real
// processes: both runs log the same delay, the one SplayOffset gives for
// this host and key, and run the command after it.
func TestSplayIsSteadyPerHostAndKey(t *testing.T) {
	dir := t.TempDir()
	path, off := splayKey(t, dir, time.Second, 50*time.Millisecond, 300*time.Millisecond)
	marker := filepath.Join(dir, "ran")
	for run := range 2 {
		code, p := runLW(t, nil, "--log-format", "json", "flock", "run", path, "--splay", "1s", "--", "sh", "-c", "echo x >> "+marker)
		if code != 0 {
			t.Fatalf("run %d: want 0, have %d\n%s", run, code, &p.stderr)
		}
		have, ok := splayLine(t, p.stderr.String())
		if !ok {
			t.Fatalf("run %d: no splay log line\n%s", run, &p.stderr)
		}
		if want := off.Round(time.Millisecond); have != want {
			t.Fatalf("run %d: want a delay of %v (the host's and key's offset), have %v", run, want, have)
		}
	}
	if b, _ := os.ReadFile(marker); string(b) != "x\nx\n" {
		t.Fatalf("want the command run twice, have %q", b)
	}
}

// TestSignalDuringSplayAborts sends each terminating signal to a wrapper
// that is splaying: it exits 128+N, the command never ran and nothing was
// taken or created (no lock file).
func TestSignalDuringSplayAborts(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			path, _ := splayKey(t, dir, time.Hour, time.Minute, time.Hour)
			marker := filepath.Join(dir, "ran")
			p := startLW(t, nil, "--log-format", "json", "flock", "run", path, "--splay", "1h", "--", "touch", marker)
			waitFor(t, "the splay to begin", func() bool { _, ok := splayLine(t, p.stderr.String()); return ok })
			p.Cmd.Process.Signal(sig)
			if have, want := p.wait(t), 128+int(sig); have != want {
				t.Fatalf("want %d, have %d\n%s", want, have, &p.stderr)
			}
			if exists(marker) || exists(path) {
				t.Fatalf("want nothing run or created, have command ran %v, lock file %v", exists(marker), exists(path))
			}
		})
	}
}

// TestSplayIsNotPartOfTheWait: a held lock, --wait 0 after a splay still
// tries once, after the splay, and reports the conflict (75).
func TestSplayThenConflict(t *testing.T) {
	dir := t.TempDir()
	path, _ := splayKey(t, dir, time.Second, 50*time.Millisecond, 300*time.Millisecond)
	ready, gone := filepath.Join(dir, "ready"), filepath.Join(dir, "gone")
	holder := startLW(t, nil, "flock", "run", path, "--", "sh", "-c", holdUntil(ready, gone))
	waitFor(t, "holder's child", func() bool { return exists(ready) })
	code, p := runLW(t, nil, "--log-format", "json", "flock", "run", path, "--splay", "1s", "--", "true")
	if code != 75 {
		t.Fatalf("want 75 (held), have %d\n%s", code, &p.stderr)
	}
	if _, ok := splayLine(t, p.stderr.String()); !ok {
		t.Fatalf("no splay log line\n%s", &p.stderr)
	}
	os.WriteFile(gone, nil, 0o644)
	if have := holder.wait(t); have != 0 {
		t.Fatalf("holder: want 0, have %d", have)
	}
}
