package once

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Record states.
const (
	StateRunning = "running"
	StateDone    = "done"
)

// Record is the JSON value stored under a key.
type Record struct {
	State    string     `json:"state"`
	RunID    string     `json:"run_id"`
	Holder   string     `json:"holder"`
	Host     string     `json:"host"`
	PID      int        `json:"pid"`
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished,omitempty"`
	ExitCode *int       `json:"exit_code,omitempty"`
	Argv     []string   `json:"argv,omitempty"`
}

// ParseRecord decodes a record and checks the fields its state needs.
func ParseRecord(b []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("not a leasewrap once record: %w", err)
	}
	switch r.State {
	case StateRunning:
	case StateDone:
		if r.ExitCode == nil {
			return nil, fmt.Errorf("record in state %q has no exit_code", r.State)
		}
	default:
		return nil, fmt.Errorf("record has unknown state %q", r.State)
	}
	if r.RunID == "" {
		return nil, fmt.Errorf("record has no run_id")
	}
	return &r, nil
}

// replayable checks what a run decides on beyond ParseRecord: a done
// record's exit code must be an exit status (0..255: 256 would replay as
// 0), and a running record must be attached to a lease (one without is
// never removed by an expiry: it would hold the key forever).
func (r *Record) replayable(leaseAttached bool) error {
	switch {
	case r.State == StateDone && (*r.ExitCode < 0 || *r.ExitCode > 255):
		return fmt.Errorf("records exit_code %d, which is not an exit status (0..255)", *r.ExitCode)
	case r.State == StateRunning && !leaseAttached:
		return fmt.Errorf("holds run %s in state %q with no lease attached: no wrapper renews it and it never expires", r.RunID, r.State)
	}
	return nil
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:%@=+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (r *Record) marshal() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// EtcdKey is the etcd key of KEY under prefix: KEY percent-encoded as one
// path segment (url.PathEscape: "/" becomes %2F, "%" becomes %25).
func EtcdKey(prefix, key string) string { return prefix + url.PathEscape(key) }
