// Package once is `leasewrap pg once`: run a command at most once per key
// across hosts. A run holds the key's row (kind once) as the pg lease
// does; on success it publishes the exit code in the row (state done,
// guarded by holder and fence, before the fencing deadline), and later
// runs replay it without running. A failure frees the row so a retry
// runs, unless failures are published too.
package once

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/pg/conn"
	"github.com/leasewrap/leasewrap/pg/lock"
	"github.com/leasewrap/leasewrap/pg/table"
)

// Kind is the lease kind (LEASEWRAP_KIND) and the rows' kind.
const Kind = "pg-once"

// Config is a lock.Config (Kind is set here) and what to publish.
type Config struct {
	lock.Config
	Host             string
	Argv             []string
	PublishFailures  bool
	PublishSignalled bool
}

// Locker claims the key.
type Locker struct {
	*lock.Locker
	cfg Config
}

var _ lease.Locker = (*Locker)(nil)

// New returns a Locker for cfg.
func New(cfg Config) (*Locker, error) {
	if cfg.RunID == "" {
		return nil, errors.New("once: no run id")
	}
	cfg.Kind = Kind
	l, err := lock.New(cfg.Config)
	if err != nil {
		return nil, err
	}
	return &Locker{Locker: l, cfg: cfg}, nil
}

// Acquire takes the key, or replays its published result
// (*lease.ReplayError), or reports the run in flight (lease.ErrHeld).
func (l *Locker) Acquire(ctx context.Context) (lease.Lease, error) {
	le, row, err := l.Try(ctx)
	if err != nil {
		return nil, err
	}
	if le != nil {
		return &Lease{Lease: le, l: l}, nil
	}
	if row != nil && row.State == "done" && row.SchemaVersion <= table.SchemaVersion && row.ExitCode != nil {
		return nil, &lease.ReplayError{Kind: Kind, Key: l.cfg.Name, ExitCode: *row.ExitCode,
			Summary: fmt.Sprintf("run %s exited %d at %s", row.RunID, *row.ExitCode, row.RenewedAt.UTC().Format(time.RFC3339))}
	}
	return nil, l.Refusal(row)
}

// Lease is a held key.
type Lease struct {
	*lock.Lease
	l *Locker
}

// Record is what a published row's record column holds.
type Record struct {
	RunID    string    `json:"run_id"`
	Host     string    `json:"host"`
	Holder   string    `json:"holder"`
	Argv     []string  `json:"argv"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	ExitCode int       `json:"exit_code"`
}

// publishes says whether res is recorded as the key's outcome.
func (l *Locker) publishes(res lease.Result) bool {
	switch {
	case res.Lost:
		return false
	case res.ExitCode == 0 && !res.TimedOut:
		return true
	case !l.cfg.PublishFailures:
		return false
	case res.Forwarded != syscall.Signal(0):
		return l.cfg.PublishSignalled
	}
	return true
}

// Finish publishes the result (before the fencing deadline) or frees the
// row. A result that could not be published is an error matching
// lease.ErrLost: the run is not reported as a success.
func (le *Lease) Finish(ctx context.Context, res lease.Result) error {
	cfg := le.l.cfg
	if !le.l.publishes(res) {
		return le.Lease.Finish(ctx, res)
	}
	if !res.Fence.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, res.Fence)
		defer cancel()
	}
	rec, _ := json.Marshal(Record{RunID: cfg.RunID, Host: cfg.Host, Holder: cfg.Holder, Argv: cfg.Argv,
		Started: res.Started, Finished: res.Finished, ExitCode: res.ExitCode})
	var ok bool
	err := le.Settle(ctx, func(c *conn.Conn) error {
		var err error
		ok, err = table.Publish(ctx, c.Conn, cfg.Store.Ident(), Kind, cfg.Name, cfg.Holder, le.Fence(), res.ExitCode, rec)
		if err == nil && c.Unreplicated() {
			err = conn.ErrUnreplicated
		}
		return err
	})
	if err != nil || !ok {
		why := "the row was no longer ours"
		if err != nil {
			why = err.Error()
		}
		return fmt.Errorf("once %q: the result could not be published (%s); a later run runs again: %w", cfg.Name, why, lease.ErrLost)
	}
	return nil
}
