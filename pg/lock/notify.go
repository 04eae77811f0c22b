package lock

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/pg/conn"
	"github.com/leasewrap/leasewrap/pg/table"
)

// Notify returns the waiter's wake-up source (lease.Notifier): with
// Config.Notify, a direct connection of its own that LISTENs on
// table.Channel and wakes on our row's release; without it (or through a
// pooler, or while that connection is down), only the supervisor's
// back-off. While it LISTENs, attempts between wake-ups may answer from
// the known hold (known.go). Safety never rests on it: every wake-up is
// followed by an ordinary attempt, and a hold is known only until the
// row may have expired.
func (l *Locker) Notify(ctx context.Context) (lease.Wake, error) {
	w := &wake{l: l, payload: table.Payload(l.cfg.Store.Ident(), l.cfg.Kind, l.cfg.Name)}
	l.w = w
	l.forget()
	if l.cfg.Notify {
		w.listen(ctx)
	}
	return w, nil
}

// wake LISTENs on a direct connection, redialled (at most once per Wait)
// when it drops, unless Config.Notify is off or a pooler answered.
type wake struct {
	l       *Locker
	payload string
	c       *conn.Conn
	pooled  bool // a pooler answered: never LISTEN through it
}

func (w *wake) listen(ctx context.Context) {
	cc := w.l.cfg.Store.ConnConfig()
	ctx, cancel := context.WithTimeout(ctx, w.l.cfg.Timeout)
	defer cancel()
	c, err := conn.Dial(ctx, cc, w.l.cfg.Timeout)
	if err != nil {
		w.l.cfg.Logger.Debug("LISTEN for releases: no connection; polling", "err", err)
		return
	}
	// Through a pooler (PgBouncer) the backend key the client got is the
	// pooler's own: a LISTEN there would stay on a pooled server
	// connection after we left. Poll instead.
	var pid uint32
	if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil || pid != c.PgConn().PID() {
		w.pooled = err == nil
		w.l.cfg.Logger.Debug("LISTEN for releases: not a direct connection (a pooler such as PgBouncer answers); polling", "err", err)
		c.Close()
		return
	}
	if _, err := c.Exec(ctx, "LISTEN "+pgx.Identifier{table.Channel}.Sanitize()); err != nil {
		w.l.cfg.Logger.Debug("LISTEN for releases refused; polling", "err", err)
		c.Close()
		return
	}
	w.c = c
}

// Wait blocks until our row's release is announced, max passed, or ctx
// ended.
func (w *wake) Wait(ctx context.Context, _ error, max time.Duration) (bool, error) {
	if (w.c == nil || w.c.IsClosed()) && w.l.cfg.Notify && !w.pooled {
		w.Close()
		w.listen(ctx)
	}
	wctx, cancel := context.WithTimeout(ctx, max)
	defer cancel()
	for w.c != nil {
		n, err := w.c.WaitForNotification(wctx)
		if err != nil {
			break
		}
		if n.Payload == w.payload {
			w.l.forget()
			return true, nil
		}
	}
	<-wctx.Done() // no connection, or it failed: the back-off still applies
	if err := ctx.Err(); err != nil {
		return false, err
	}
	return false, nil
}

func (w *wake) Close() error {
	w.c.Close()
	w.c = nil
	return nil
}
