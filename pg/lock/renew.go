package lock

import (
	"context"
	"fmt"
	"time"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/pg/conn"
	"github.com/leasewrap/leasewrap/pg/table"
)

// ConfirmedAt is the monotonic start of the latest statement that
// extended the row by its TTL: the acquisition or a renewal whose UPDATE
// matched it and was not left unreplicated (lease.Confirmed).
func (le *Lease) ConfirmedAt() time.Time {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.confirmed
}

// attemptTimeout bounds one renewal's statement.
func (le *Lease) attemptTimeout() time.Duration {
	return min(max(le.l.cfg.TTL/4, time.Second), 10*time.Second)
}

// Renew sends one guarded UPDATE. An UPDATE that matched no row is loss
// (lease.ErrLost); anything else (a timeout whose outcome is unknown, a
// read-only server, a shutdown, the network, a cancelled synchronous
// wait) is transient and extends nothing.
func (le *Lease) Renew(ctx context.Context) error {
	le.mu.Lock()
	finished := le.finished
	le.mu.Unlock()
	cfg := le.l.cfg
	if finished {
		return fmt.Errorf("%s %q: settled, not renewed again: %w", cfg.Kind, cfg.Name, lease.ErrLost)
	}
	var sent time.Time
	var ok bool
	var row *table.Row
	// The dial (to the next host, after a failover) is bounded by the
	// dial timeout and ctx (the fence); the statement by attemptTimeout.
	err := cfg.Store.Do(ctx, func(c *conn.Conn) error {
		sctx, cancel := context.WithTimeout(ctx, le.attemptTimeout())
		defer cancel()
		sent = time.Now() // before the statement, never the answer's time
		var err error
		if ok, err = table.Renew(sctx, c.Conn, cfg.Store.Ident(), cfg.Kind, cfg.Name, cfg.Holder, le.fence); err != nil {
			return err
		}
		if c.Unreplicated() {
			return conn.ErrUnreplicated
		}
		if !ok {
			row, _ = table.Read(sctx, c.Conn, cfg.Store.Ident(), cfg.Kind, cfg.Name)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s %q: renew: %w", cfg.Kind, cfg.Name, err)
	}
	if !ok {
		return fmt.Errorf("%w: %s %q: the renewal matched no row: %s", lease.ErrLost, cfg.Kind, cfg.Name, lostWhy(row, le.fence))
	}
	le.mu.Lock()
	if sent.After(le.confirmed) {
		le.confirmed = sent
	}
	le.mu.Unlock()
	return nil
}

// lostWhy says what the row shows after a renewal matched nothing.
func lostWhy(row *table.Row, fence int64) string {
	switch {
	case row == nil:
		return "the row is gone"
	case row.Fence != fence:
		return fmt.Sprintf("taken by %s (fence %d, ours %d)", row.Holder, row.Fence, fence)
	case row.State != "held":
		return "its state is " + row.State
	}
	return "it expired before the renewal reached the server"
}

// Finish releases the row, guarded by holder and fence, announcing the
// release. A lease whose fence passed before the job was settled must
// prove it was still ours (unexpired); otherwise the error matches
// lease.ErrLost.
func (le *Lease) Finish(ctx context.Context, res lease.Result) error {
	le.finish()
	var ok bool
	err := le.l.cfg.Store.Do(ctx, func(c *conn.Conn) error {
		var err error
		ok, err = le.release(ctx, c, res.PastFence)
		return err
	})
	if res.PastFence && !res.Lost && (err != nil || !ok) {
		return fmt.Errorf("%s %q: the fencing deadline passed before the job was settled and the row could not be shown to be still ours; not reporting success: %w", le.l.cfg.Kind, le.l.cfg.Name, lease.ErrLost)
	}
	if err != nil {
		// Best effort: the row expires by itself within its TTL.
		le.l.cfg.Logger.Warn("could not release; the row expires by itself within its TTL", "kind", le.l.cfg.Kind, "key", le.l.cfg.Name, "err", err)
	}
	return nil
}

// finish stops renewal for good.
func (le *Lease) finish() {
	le.mu.Lock()
	le.finished = true
	le.mu.Unlock()
}

// release frees the row if it is still ours (live: and unexpired).
func (le *Lease) release(ctx context.Context, c *conn.Conn, live bool) (bool, error) {
	cfg := le.l.cfg
	ctx, cancel := context.WithTimeout(ctx, max(le.attemptTimeout(), 2*time.Second))
	defer cancel()
	return table.Release(ctx, c.Conn, cfg.Store.Ident(), cfg.Kind, cfg.Name, cfg.Holder, le.fence, live)
}

// Settle is Finish's store access for kinds built on Lease (once): it
// stops renewal and runs fn on a connection.
func (le *Lease) Settle(ctx context.Context, fn func(c *conn.Conn) error) error {
	le.finish()
	return le.l.cfg.Store.Do(ctx, fn)
}

// Release frees the row on c if still ours (Settle's callers).
func (le *Lease) Release(ctx context.Context, c *conn.Conn, live bool) (bool, error) {
	return le.release(ctx, c, live)
}
