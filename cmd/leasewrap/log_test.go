package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/cli"
)

// TestJSONLogFormatCoversEveryStderrLine runs leasewrap processes that fail
// in different ways with --log-format json (or LEASEWRAP_LOG_FORMAT=json)
// and checks that every line they write on stderr is a JSON object, the
// final error line included.
func TestJSONLogFormatCoversEveryStderrLine(t *testing.T) {
	root := t.TempDir()
	t.Setenv("FNO_EVENTS_PATH", filepath.Join(root, "events.jsonl")) // not ./.fno of the package
	// A live claim held by another holder (a TTL claim of this test's pid).
	hold := leasewrapCmd(t, "claim", "acquire", "job", "--root", root, "--holder", "other", "--ttl-ms", "600000")
	if out, err := hold.CombinedOutput(); err != nil {
		t.Fatalf("claim acquire: %v\n%s", err, out)
	}
	cases := []struct {
		name  string
		env   []string
		args  []string
		code  int    // 0: any failure
		error string // a substring of the final ERROR record's msg
	}{
		{"held", nil, []string{"--log-format", "json", "claim", "run", "job", "--root", root, "--", "true"}, cli.ExitConflict, "held"},
		{"flag after the kind", nil, []string{"claim", "run", "job", "--root", root, "--log-format=json", "--", "true"}, cli.ExitConflict, "held"},
		{"environment", []string{"LEASEWRAP_LOG_FORMAT=json"}, []string{"claim", "run", "job", "--root", root, "--", "true"}, cli.ExitConflict, "held"},
		{"unknown flag", nil, []string{"--log-format", "json", "claim", "run", "job", "--root", root, "--no-such-flag", "--", "true"}, cli.ExitUsage, "no-such-flag"},
		{"usage from the environment", []string{"LEASEWRAP_LOG_FORMAT=json"}, []string{"reserve", "run", "job"}, cli.ExitUsage, "no command"},
		{"command not found", nil, []string{"--log-format", "json", "claim", "run", "free", "--root", root, "--", filepath.Join(root, "no-such-command")}, 0, "no-such-command"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := leasewrapCmd(t, tc.args...)
			cmd.Env = append(cmd.Env, tc.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || (tc.code != 0 && ee.ExitCode() != tc.code) {
				t.Fatalf("want exit %d, have %v\nstderr:\n%s", tc.code, err, stderr.String())
			}
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			if stderr.Len() == 0 {
				t.Fatal("want at least the error line on stderr, have nothing")
			}
			var last map[string]any
			for i, l := range lines {
				last = nil
				if err := json.Unmarshal([]byte(l), &last); err != nil {
					t.Fatalf("stderr line %d is not JSON: %q (%v)\nstderr:\n%s", i+1, l, err, stderr.String())
				}
			}
			// A skip (held) is the lock doing its job: INFO, not ERROR.
			if want := map[bool]string{true: "INFO", false: "ERROR"}[tc.code == cli.ExitConflict]; last["level"] != want {
				t.Errorf("want the last record at level %s, have %v", want, last)
			}
			msg, _ := last["msg"].(string)
			if !strings.Contains(msg, tc.error) {
				t.Errorf("want the last record's msg to mention %q, have %q", tc.error, msg)
			}
			if strings.HasPrefix(msg, "leasewrap: ") {
				t.Errorf("want the msg without the text-mode prefix, have %q", msg)
			}
			if last["kind"] != "claim" && last["kind"] != "reservation" {
				t.Errorf("want the error record to carry the kind, have %v", last)
			}
			if tc.code == cli.ExitConflict && last["key"] != "job" {
				t.Errorf("want the error record to carry the key, have %v", last)
			}
		})
	}
}

// TestTextLogFormatErrorLineHasTimeAndLevel: in text mode leasewrap's own
// error line looks like its other lines: a timestamp, ERR, the kind.
func TestTextLogFormatErrorLineHasTimeAndLevel(t *testing.T) {
	cmd := leasewrapCmd(t, "--log-format", "text", "reserve", "run", "job")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run()
	line := stderr.String()
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S* ERR reserve run: usage: no command given.* kind=reservation key=job\n$`).MatchString(line) {
		t.Fatalf("want \"TIME ERR reserve run: usage: … kind=reservation key=job\", have %q", line)
	}
}

// TestJSONDurationsAreSeconds: every duration leasewrap logs in JSON is
// seconds, a number (docs: README, Usage).
func TestJSONDurationsAreSeconds(t *testing.T) {
	root := t.TempDir()
	cmd := leasewrapCmd(t, "--log-format", "json", "claim", "run", "job", "--root", root, "--ttl", "2m", "--", "true")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, &stderr)
	}
	var acquired map[string]any
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		if _, ok := rec["ttl"]; ok {
			acquired = rec
		}
	}
	if ttl, ok := acquired["ttl"].(float64); !ok || ttl != 120 {
		t.Fatalf("want \"ttl\":120 (seconds), have %v", acquired)
	}
}
