// Package conn turns leasewrap-pg's connection settings into pgx
// connections: the DSN from --dsn, else $DATABASE_URL, else libpq's own
// variables (PGHOST, PGUSER, PGPASSFILE, …, which pgx reads), one
// autocommit connection per use, no statement cache (it works through
// PgBouncer's transaction pooling), and errors sorted into the exit codes
// of a distributed kind (Classify).
package conn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"github.com/leasewrap/leasewrap/lease"
)

// Config says where PostgreSQL is.
type Config struct {
	// DSN is a libpq connection string or URL; "" uses $DATABASE_URL
	// (Getenv), else libpq's environment variables alone.
	DSN string
	// DialTimeout bounds one host's connection attempt when the DSN sets
	// no connect_timeout, and a whole Dial.
	DialTimeout time.Duration
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
}

func (c Config) getenv(k string) string {
	if c.Getenv == nil {
		return os.Getenv(k)
	}
	return c.Getenv(k)
}

// Source says where the DSN came from, for messages: "--dsn",
// "$DATABASE_URL" or "the PG* environment variables".
func (c Config) Source() string {
	switch {
	case c.DSN != "":
		return "--dsn"
	case c.getenv("DATABASE_URL") != "":
		return "$DATABASE_URL"
	}
	return "the PG* environment variables"
}

// Parse returns the pgx configuration c describes. Its errors never carry
// the DSN (it may hold a password).
func (c Config) Parse() (*pgx.ConnConfig, error) {
	dsn := c.DSN
	if dsn == "" {
		dsn = c.getenv("DATABASE_URL")
	}
	cc, err := pgx.ParseConfig(dsn)
	if err != nil {
		var pe *pgconn.ParseConfigError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("the connection string from %s cannot be parsed (check its syntax: key=value pairs or a postgres:// URL)", c.Source())
		}
		return nil, fmt.Errorf("the connection string from %s cannot be used: %s", c.Source(), Redact(err.Error(), ""))
	}
	// One statement per round trip, no prepared statements kept across
	// transactions: the same on a direct connection and through PgBouncer.
	cc.DefaultQueryExecMode = pgx.QueryExecModeExec
	cc.StatementCacheCapacity, cc.DescriptionCacheCapacity = 0, 0
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = c.DialTimeout // per host, the fallbacks included
	}
	if cc.RuntimeParams == nil {
		cc.RuntimeParams = map[string]string{}
	}
	if _, ok := cc.RuntimeParams["application_name"]; !ok {
		cc.RuntimeParams["application_name"] = "leasewrap"
	}
	return cc, nil
}

// Conn is one connection with a watch on the server's notices: a
// synchronous-replication wait cancelled while a statement ran means its
// write may not have reached a standby (Unreplicated).
type Conn struct {
	*pgx.Conn
	unreplicated atomic.Bool
}

// Dial connects (trying the DSN's hosts in order, as libpq does) within
// DialTimeout, and classifies a failure (Classify).
func Dial(ctx context.Context, cc *pgx.ConnConfig, timeout time.Duration) (*Conn, error) {
	cc = cc.Copy()
	c := &Conn{}
	cc.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		if unreplicatedNotice(n) {
			c.unreplicated.Store(true)
		}
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout*time.Duration(1+len(cc.Fallbacks)))
		defer cancel()
	}
	pc, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, Classify(fmt.Errorf("connect to PostgreSQL (%s): %w", hosts(cc), &redacted{Redact(err.Error(), cc.Password), err}))
	}
	c.Conn = pc
	return c, nil
}

// hosts lists the hosts a connection tries, for messages.
func hosts(cc *pgx.ConnConfig) string {
	hs := []string{fmt.Sprintf("%s:%d", cc.Host, cc.Port)}
	for _, f := range cc.Fallbacks {
		h := fmt.Sprintf("%s:%d", f.Host, f.Port)
		if h != hs[len(hs)-1] {
			hs = append(hs, h)
		}
	}
	return strings.Join(hs, ",")
}

// Unreplicated reports, and clears, whether a synchronous-replication
// wait was cancelled since the last call: the statement committed on the
// primary but may be missing after a failover.
func (c *Conn) Unreplicated() bool { return c.unreplicated.Swap(false) }

// Close closes the connection under a short bounded context.
func (c *Conn) Close() {
	if c == nil || c.Conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c.Conn.Close(ctx)
}

// unreplicatedNotice is PostgreSQL's warning for a commit whose
// synchronous-replication wait was cancelled.
func unreplicatedNotice(n *pgconn.Notice) bool {
	return strings.Contains(n.Message, "canceling wait for synchronous replication") ||
		strings.Contains(n.Detail, "might not have been replicated")
}

// Redact replaces pw, when not empty, in s: pgx's errors name hosts and
// users, and this makes sure no message ever carries the password.
func Redact(s, pw string) string {
	if pw != "" {
		s = strings.ReplaceAll(s, pw, "xxxxx")
	}
	return s
}

// ErrUnreplicated is a write the primary committed while its wait for a
// synchronous standby was cancelled: after a failover it may be gone.
var ErrUnreplicated = fmt.Errorf("the write committed on the primary but its wait for a synchronous standby was cancelled (\"might not have been replicated\"): %w", lease.ErrUnavailable)

// redacted is an error whose message has the password taken out; its
// chain (a *pgconn.PgError's SQLSTATE) stays for Classify.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

// CancelOnTimeout returns a copy of cc whose statements, when their
// context ends, are cancelled on the server (a CancelRequest, as libpq's
// PQcancel) before the connection is given up half a second later: an
// acquisition abandoned while it waited for a row lock must not commit
// after we stopped waiting for it. (pgx's default only closes the socket,
// which a backend waiting for a lock does not notice.) Not for a
// connection that waits for notifications: each timeout would open a
// connection to send a cancel.
func CancelOnTimeout(cc *pgx.ConnConfig) *pgx.ConnConfig {
	cc = cc.Copy()
	cc.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: 500 * time.Millisecond}
	}
	return cc
}
