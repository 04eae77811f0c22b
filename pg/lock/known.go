package lock

import (
	"time"

	"github.com/leasewrap/leasewrap/pg/conn"
	"github.com/leasewrap/leasewrap/pg/table"
)

// safetyPoll bounds how long a waiter answers from a known hold: it asks
// the server again at least this often, whatever the row's lifetime.
const safetyPoll = 5 * time.Second

// known is the hold a LISTENing waiter's last attempt found: until the
// row expires at the earliest (the server's expires_at - statement time,
// counted from when that statement was sent), an attempt answers the
// same row without a statement. A NOTIFY for our row, a LISTEN
// connection that dropped or was replaced, or reaching that instant
// forgets it. It can only delay a take-over (a release whose NOTIFY was
// lost waits for the instant), never grant one.
type known struct {
	row   *table.Row
	until time.Time  // monotonic
	on    *conn.Conn // the LISTEN connection it was learnt under
}

// listening is the waiter's LISTEN connection while it is up, or nil.
func (l *Locker) listening() *conn.Conn {
	if l.w == nil || l.w.c == nil || l.w.c.IsClosed() {
		return nil
	}
	return l.w.c
}

// recall is the known hold, or nil when an attempt must ask.
func (l *Locker) recall() *table.Row {
	k := &l.known
	if k.row == nil {
		return nil
	}
	if k.on != l.listening() || !l.now().Before(k.until) {
		l.forget()
		return nil
	}
	return k.row
}

// learn keeps row, read by a statement sent at sent, as the known hold if
// it is live and the waiter LISTENs.
func (l *Locker) learn(row *table.Row, sent time.Time) {
	c := l.listening()
	if row == nil || !row.Live || c == nil {
		return
	}
	left := row.ExpiresAt.Sub(row.ServerTime) // both the server's, from one statement
	l.known = known{row: row, until: sent.Add(min(left, l.safetyPoll)), on: c}
}

// forget makes the next attempt ask.
func (l *Locker) forget() { l.known = known{} }
