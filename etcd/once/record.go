package once

import (
	"encoding/json"
	"fmt"
	"net/url"
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

func (r *Record) marshal() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// EtcdKey is the etcd key of KEY under prefix: KEY percent-encoded as one
// path segment (url.PathEscape: "/" becomes %2F, "%" becomes %25).
func EtcdKey(prefix, key string) string { return prefix + url.PathEscape(key) }
