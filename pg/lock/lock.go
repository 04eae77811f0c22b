package lock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/pg/conn"
	"github.com/leasewrap/leasewrap/pg/internal/store"
	"github.com/leasewrap/leasewrap/pg/table"
)

// Kind is the lease kind's name (LEASEWRAP_KIND) and the rows' kind.
const Kind = "pg"

// Config describes one lease row.
type Config struct {
	Store *store.Store
	// Kind is the lease kind (LEASEWRAP_KIND) and the rows' kind column:
	// Kind, or the once kind's.
	Kind string
	Name string
	// TTL is the lease's time to live, whole seconds.
	TTL    time.Duration
	Holder string
	// RunID is recorded in the row (the once kind's run id), or "".
	RunID string
	// Timeout bounds one dial; an acquisition takes at most three.
	Timeout time.Duration
	// Notify makes a waiter LISTEN for releases on a connection of its
	// own (not through PgBouncer's transaction pooling, where LISTEN
	// reaches a pooled server connection).
	Notify bool
	Logger *slog.Logger
}

// Locker takes the row. It implements lease.Locker and lease.Notifier.
// Like every lease.Locker it is used by one goroutine at a time; its
// Wake shares that goroutine (the supervisor's attempt loop).
type Locker struct {
	cfg Config
	now func() time.Time // monotonic; a seam for tests
	// safetyPoll bounds how long a hold stays known (safetyPoll, or
	// longer in tests).
	safetyPoll time.Duration

	w     *wake // the latest Notify's, LISTENing or not
	known known // the hold the last attempt found, while LISTENing
}

var (
	_ lease.Locker    = (*Locker)(nil)
	_ lease.Notifier  = (*Locker)(nil)
	_ lease.Identity  = (*Locker)(nil)
	_ lease.Lease     = (*Lease)(nil)
	_ lease.Confirmed = (*Lease)(nil)
)

// New returns a Locker for cfg.
func New(cfg Config) (*Locker, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("pg: no store")
	case cfg.Name == "":
		return nil, errors.New("pg: the lease name is empty")
	case cfg.TTL < time.Second || cfg.TTL%time.Second != 0:
		return nil, fmt.Errorf("pg: TTL %v is not a whole number of seconds >= 1s", cfg.TTL)
	}
	if cfg.Kind == "" {
		cfg.Kind = Kind
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Locker{cfg: cfg, now: time.Now, safetyPoll: safetyPoll}, nil
}

func (l *Locker) Kind() string   { return l.cfg.Kind }
func (l *Locker) Key() string    { return l.cfg.Name }
func (l *Locker) Holder() string { return l.cfg.Holder }

// Acquire tries once (lease.Locker).
func (l *Locker) Acquire(ctx context.Context) (lease.Lease, error) {
	le, row, err := l.Try(ctx)
	if err != nil {
		return nil, err
	}
	if le != nil {
		return le, nil
	}
	return nil, l.Refusal(row)
}

// ErrTTL is a TTL above the table's largest (its meta row's ttl_seconds):
// after a failover the quarantine lasts that largest TTL, so a longer
// lease could outlive it.
var ErrTTL = errors.New("pg: TTL above the table's largest")

// errLocked is an acquisition whose statement waited past its bound on
// an answering server: for the row's lock.
var errLocked = errors.New("pg: the row stayed locked")

// Try tries once. It returns the Lease, or the row that kept it from us
// (nil when the quarantine after a timeline change or a concurrent
// change did), or an error. While the waiter LISTENs, a row found held
// is answered again without a statement until it may have expired
// (known.go).
func (l *Locker) Try(ctx context.Context) (*Lease, *table.Row, error) {
	if row := l.recall(); row != nil {
		return nil, row, nil
	}
	var read time.Time
	ctx, cancel := context.WithTimeout(ctx, 3*l.cfg.Timeout)
	defer cancel()
	var le *Lease
	var row *table.Row
	var quarantine *table.Meta
	st := l.cfg.Store
	err := st.DoRetry(ctx, func(c *conn.Conn) error {
		le, row, quarantine = nil, nil, nil
		m, err := table.Observe(ctx, c.Conn, st.Ident())
		switch {
		case err != nil:
			return err
		case m.Schema > table.SchemaVersion:
			return fmt.Errorf("%w: table %s: its meta row has schema %d, newer than this leasewrap's %d; nothing was written", lease.ErrRefused, st.Ident(), m.Schema, table.SchemaVersion)
		case l.cfg.TTL > m.MaxTTL:
			return fmt.Errorf("%w: --ttl %v is above the largest TTL of table %s, %v (its row kind='meta', name='' says so in ttl_seconds): after a failover nothing is granted for that largest TTL plus %v, so a longer lease could outlive the quarantine; use a shorter --ttl or raise ttl_seconds there",
				ErrTTL, l.cfg.TTL, st.Ident(), m.MaxTTL, table.QuarantineMargin)
		case m.Quarantined:
			quarantine = &m
			return nil
		}
		// The statement is bounded on its own: on an answering server it
		// waits only for the row's lock, which a statement of the holder's
		// keeps (a renewal waiting for a synchronous standby, a stopped
		// backend). That is contention, not an unreachable server.
		actx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
		defer cancel()
		sent := time.Now() // before the statement: the row lives TTL from no earlier
		fence, ok, err := table.Acquire(actx, c.Conn, st.Ident(), l.cfg.Kind, l.cfg.Name, l.cfg.Holder, l.cfg.RunID, l.cfg.TTL)
		if err != nil && actx.Err() != nil && ctx.Err() == nil {
			return errLocked
		}
		if err != nil {
			return err
		}
		if ok {
			le = &Lease{l: l, fence: fence, confirmed: sent}
			if c.Unreplicated() {
				le.release(ctx, c, false)
				le = nil
				return fmt.Errorf("%s %q: not acquired: %w", l.cfg.Kind, l.cfg.Name, conn.ErrUnreplicated)
			}
			return nil
		}
		read = l.now() // before the statement: the row lives its remaining time from no earlier
		row, err = table.Read(ctx, c.Conn, st.Ident(), l.cfg.Kind, l.cfg.Name)
		return err
	})
	if errors.Is(err, errLocked) {
		return nil, nil, &lease.HeldError{Kind: l.cfg.Kind, Key: l.cfg.Name,
			Detail: fmt.Sprintf("the row stayed locked for %v by another session's statement (a holder's renewal waiting for a synchronous standby, a stopped backend)", l.cfg.Timeout)}
	}
	if err != nil {
		return nil, nil, err
	}
	if quarantine != nil {
		change := fmt.Sprintf("the server is on WAL timeline %d, new to this table (a failover, or the table's first use on a timeline above 1)", quarantine.Timeline)
		if quarantine.Previous != 0 {
			change = fmt.Sprintf("the server's WAL timeline is %d (before: %d)", quarantine.Timeline, quarantine.Previous)
		}
		return nil, nil, &lease.HeldError{Kind: l.cfg.Kind, Key: l.cfg.Name, Holder: "the quarantine after a failover",
			Detail: fmt.Sprintf("%s: nothing is granted until %s (server time), the table's largest TTL plus %v after the change was seen",
				change, quarantine.Until.UTC().Format(time.RFC3339), table.QuarantineMargin)}
	}
	if le == nil {
		l.learn(row, read)
	}
	return le, row, nil
}

// Refusal is why row kept the lease from us: held by another (a
// *lease.HeldError), or a row of a newer schema (lease.ErrRefused).
func (l *Locker) Refusal(row *table.Row) error {
	if row == nil {
		return &lease.HeldError{Kind: l.cfg.Kind, Key: l.cfg.Name, Detail: "not granted: the row or the meta row changed meanwhile"}
	}
	if row.SchemaVersion > table.SchemaVersion {
		return fmt.Errorf("%w: table %s: %s %q has schema %d, newer than this leasewrap's %d; it is not overwritten", lease.ErrRefused,
			l.cfg.Store.Ident(), row.Kind, row.Name, row.SchemaVersion, table.SchemaVersion)
	}
	return &lease.HeldError{Kind: l.cfg.Kind, Key: l.cfg.Name, Holder: row.Holder, Since: row.AcquiredAt,
		Detail: fmt.Sprintf("fence %d, state %s, expires in %v unless renewed", row.Fence, row.State, row.ExpiresAt.Sub(row.ServerTime).Round(time.Millisecond))}
}

// Lease is a held row.
type Lease struct {
	l     *Locker
	fence int64

	mu        sync.Mutex // guards confirmed and finished
	confirmed time.Time
	finished  bool
}

// Fence is the row's fence (LEASEWRAP_FENCE).
func (le *Lease) Fence() int64 { return le.fence }

// Env gives the child LEASEWRAP_FENCE, LEASEWRAP_PG_TABLE (the quoted
// table) and, for a once run, LEASEWRAP_RUN_ID.
func (le *Lease) Env() []string {
	env := []string{"LEASEWRAP_FENCE=" + strconv.FormatInt(le.fence, 10), "LEASEWRAP_PG_TABLE=" + le.l.cfg.Store.Ident()}
	if le.l.cfg.RunID != "" {
		env = append(env, "LEASEWRAP_RUN_ID="+le.l.cfg.RunID)
	}
	return env
}

func (le *Lease) Holder() string        { return le.l.cfg.Holder }
func (le *Lease) TTL() time.Duration    { return le.l.cfg.TTL }
func (le *Lease) Done() <-chan struct{} { return nil }
