package claim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"github.com/leasewrap/leasewrap/internal/safefile"
)

// Event types written to the audit log.
const (
	EventAcquired            = "claim_acquired"
	EventIdempotentReacquire = "claim_idempotent_reacquired"
	EventStaleReclaimed      = "claim_stale_reclaimed"
	EventReleased            = "claim_released"
)

// commonEventData mirrors events._common (expires_at null for PID-liveness
// claims).
func commonEventData(rec *Record) Metadata {
	var exp any
	if rec.ExpiresAt != nil {
		exp = big.NewInt(*rec.ExpiresAt)
	}
	return Metadata{
		{Key: "key", Value: rec.Key},
		{Key: "holder", Value: rec.Holder},
		{Key: "pid", Value: big.NewInt(int64(rec.PID))},
		{Key: "host", Value: rec.Host},
		{Key: "acquired_at", Value: big.NewInt(rec.AcquiredAt)},
		{Key: "expires_at", Value: exp},
	}
}

func acquiredEventData(rec *Record) Metadata {
	d := commonEventData(rec)
	if rec.Reason != nil {
		d = append(d, Field{Key: "reason", Value: *rec.Reason})
	}
	return d
}

// eventLine renders {"ts","type","source":"fno-loop","data"} as one JSON line.
func eventLine(ts time.Time, typ string, data Metadata) ([]byte, error) {
	env := Metadata{
		{Key: "ts", Value: ts.UTC().Format("2006-01-02T15:04:05Z")},
		{Key: "type", Value: typ},
		{Key: "source", Value: "fno-loop"},
		{Key: "data", Value: data},
	}
	b, err := env.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// emit appends one audit event, best effort: failures are logged, and a
// permission error is skipped at once with one warning per path.
func (c *Claims) emit(ctx context.Context, typ string, data Metadata) {
	path := c.EventsPath()
	line, err := eventLine(c.now(), typ, data)
	if err == nil {
		err = c.appendEventLine(ctx, path, line, c.eventsLockWait)
	}
	if err == nil {
		return
	}
	if isPermission(err) {
		if c.eventsDenied[path] {
			c.log.Debug("claims: audit event skipped, events log not writable", "type", typ, "path", path, "err", err)
			return
		}
		if c.eventsDenied == nil {
			c.eventsDenied = map[string]bool{}
		}
		c.eventsDenied[path] = true
		c.log.Warn("claims: audit events skipped, the events log is not writable by this user (the claim itself is unaffected)",
			"type", typ, "path", path, "err", err)
		return
	}
	c.log.Warn("claims: failed to emit audit event", "type", typ, "path", path, "err", err)
}

// appendEventLine appends line under the events.jsonl.lock.d mutex; only a regular
// single-link file is written (own or root's symlink followed one level).
func (c *Claims) appendEventLine(ctx context.Context, path string, line []byte, lockTimeout time.Duration) error {
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return err
	}
	lockDir := path + ".lock.d"
	if filepath.Base(path) == "" {
		lockDir = filepath.Join(filepath.Dir(path), "events.jsonl.lock.d")
	}
	tok, err := c.acquireDirMutex(ctx, lockDir, lockTimeout, true)
	if err != nil {
		if errors.Is(err, errMutexBusy) {
			return fmt.Errorf("events.jsonl lock timeout: %s", lockDir)
		}
		return fmt.Errorf("events.jsonl lock %s: %w", lockDir, err)
	}
	defer c.releaseDirMutex(lockDir, tok)
	f, err := safefile.OpenTrustedLink(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, fileMode)
	if err != nil {
		return err
	}
	if !bytes.HasSuffix(line, []byte("\n")) {
		line = append(line, '\n')
	}
	_, werr := f.Write(line)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}
