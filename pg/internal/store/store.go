// Package store hands out connections to one lease table: a connection is
// taken for one operation and put back only after it succeeded, so a
// renewal abandoned at the fence and the release that follows never share
// one; a failed one is closed, and the next operation dials again, across
// the DSN's hosts (target_session_attrs=read-write finds the new primary).
package store

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasewrap/leasewrap/pg/conn"
	"github.com/leasewrap/leasewrap/pg/table"
)

// Store is one table on one server (or set of hosts). Its methods may be
// called from any goroutine.
type Store struct {
	cc         *pgx.ConnConfig // for a connection of its own (ConnConfig)
	cancelling *pgx.ConnConfig // cc whose timed-out statements are cancelled
	timeout    time.Duration
	ident      string

	// readOnly checks the table without creating it (the admin verbs).
	readOnly bool

	mu      sync.Mutex
	idle    *conn.Conn
	ensured bool
}

// New returns a Store for the table ident (quoted) on cc's servers;
// timeout bounds each dial.
func New(cc *pgx.ConnConfig, timeout time.Duration, ident string) *Store {
	return &Store{cc: cc, cancelling: conn.CancelOnTimeout(cc), timeout: timeout, ident: ident}
}

// ReadOnly makes s check the table without creating it: an absent table
// is then table.ErrAbsent.
func (s *Store) ReadOnly() *Store {
	s.readOnly = true
	return s
}

// Ident is the table's quoted name.
func (s *Store) Ident() string { return s.ident }

// Do runs fn on a connection (the idle one, or a new one whose table was
// checked, created on first use). A connection fn failed on is closed.
// Errors are classified (conn.Classify).
func (s *Store) Do(ctx context.Context, fn func(c *conn.Conn) error) error {
	c, err := s.take(ctx)
	if err != nil {
		return err
	}
	c.Unreplicated() // a notice from before this operation is not its
	if err := fn(c); err != nil {
		c.Close()
		return conn.Classify(err)
	}
	s.put(c)
	return nil
}

// DoRetry is Do, tried once more on a new connection when the first
// failed in a way another connection may not (a read-only standby, a
// server shutting down, a cut connection), while ctx lasts.
func (s *Store) DoRetry(ctx context.Context, fn func(c *conn.Conn) error) error {
	err := s.Do(ctx, fn)
	if err != nil && conn.Retryable(err) && ctx.Err() == nil {
		return s.Do(ctx, fn)
	}
	return err
}

func (s *Store) take(ctx context.Context) (*conn.Conn, error) {
	s.mu.Lock()
	c, ensured := s.idle, s.ensured
	s.idle = nil
	s.mu.Unlock()
	if c != nil && !c.IsClosed() {
		return c, nil
	}
	c, err := conn.Dial(ctx, s.cancelling, s.timeout)
	if err != nil {
		return nil, err
	}
	if !ensured {
		ensure := table.Ensure
		if s.readOnly {
			ensure = table.Check
		}
		if err := ensure(ctx, c.Conn, s.ident); err != nil {
			c.Close()
			return nil, conn.Classify(err)
		}
		s.mu.Lock()
		s.ensured = true
		s.mu.Unlock()
	}
	return c, nil
}

func (s *Store) put(c *conn.Conn) {
	s.mu.Lock()
	old := s.idle
	s.idle = c
	s.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

// Close closes the idle connection.
func (s *Store) Close() {
	s.mu.Lock()
	c := s.idle
	s.idle = nil
	s.mu.Unlock()
	c.Close()
}

// ConnConfig is the connection configuration s dials with, for a
// connection of its own (a waiter's LISTEN).
func (s *Store) ConnConfig() *pgx.ConnConfig { return s.cc }
