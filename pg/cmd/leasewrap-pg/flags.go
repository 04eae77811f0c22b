package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/pg/conn"
	"github.com/leasewrap/leasewrap/pg/internal/store"
	"github.com/leasewrap/leasewrap/pg/table"
	"github.com/leasewrap/leasewrap/supervisor"
)

// connFlags say where the table is. A password belongs in the DSN's
// environment ($DATABASE_URL, PGPASSWORD) or PGPASSFILE; one given in
// --dsn is never logged and never reaches the command.
type connFlags struct {
	DSN         string        `name:"dsn" help:"libpq connection string or URL (default: $DATABASE_URL, else libpq's variables PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, PGPASSFILE, PGSSLMODE, …). Several hosts with target_session_attrs=read-write find the primary." placeholder:"DSN"`
	DialTimeout time.Duration `help:"How long one host may take to answer a connection before it counts as unreachable (the DSN's connect_timeout wins); with no host answering, exit 69." default:"5s"`
	Table       string        `help:"The lease table, NAME or SCHEMA.NAME: created on first use; a table of that name that is not leasewrap's is refused (65)." default:"leasewrap_lease"`
}

// store returns the table's store; nothing is dialled yet.
func (f *connFlags) store() (*store.Store, error) {
	ident, err := table.Ident(f.Table)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	if f.DialTimeout <= 0 {
		return nil, fmt.Errorf("%w: --dial-timeout %v must be positive", cli.ErrUsage, f.DialTimeout)
	}
	cc, err := conn.Config{DSN: f.DSN, DialTimeout: f.DialTimeout, Getenv: os.Getenv}.Parse()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	return store.New(cc, f.DialTimeout, ident), nil
}

// adminError is an admin verb's failure: 69 and 77 as classified, else 2.
func adminError(err error) error {
	if errors.Is(err, lease.ErrUnavailable) || errors.Is(err, lease.ErrNoPerm) {
		return err
	}
	return &cli.ExitError{Code: cli.AdminError, Err: err}
}

// runFlags are leasewrap's run flags plus the pg kind's TTL and holder.
// The default TTL, 30 s, gives the default kill grace of 10 s.
type runFlags struct {
	TTL      cli.Seconds `help:"Lease TTL in whole seconds (--ttl 30) or as a duration (--ttl 30s), at most the table's largest (5m unless its meta row says otherwise). At least 4 with the default --kill-grace and --renew-every, 2 with --kill-grace 0s." default:"30"`
	Holder   string      `help:"Holder identity (default: leasewrap:HOST:PID:RANDOM)."`
	NoNotify bool        `help:"Do not LISTEN for releases while waiting; poll only. (A waiter LISTENs only on a direct connection: through a pooler such as PgBouncer it polls anyway.)"`
	cli.RunFlags
}

// MinTTL is the shortest TTL any timing accepts (cli.RunFlags.Check).
const MinTTL = 2 * time.Second

// MaxTTL is the longest TTL any table could grant.
const MaxTTL = 24 * time.Hour

func (f *runFlags) check() error {
	ttl := f.ttl()
	if ttl < MinTTL || ttl%time.Second != 0 || ttl > MaxTTL {
		return fmt.Errorf("%w: --ttl %v must be a whole number of seconds from %d to %d (and at most the table's largest, 5m by default), e.g. --ttl 30", cli.ErrUsage, ttl, MinTTL/time.Second, MaxTTL/time.Second)
	}
	return f.RunFlags.Check(ttl)
}

func (f *runFlags) ttl() time.Duration { return time.Duration(f.TTL) }

func (f *runFlags) holder() string {
	if f.Holder != "" {
		return f.Holder
	}
	return cli.DefaultHolder()
}

// prepare connects once, before anything is supervised: the table is
// checked (created on first use) and --ttl compared with its largest, so
// a bad table is 65, a long TTL 64, and no answer 69 or 77, with nothing run.
func (f *runFlags) prepare(ctx context.Context, st *store.Store) error {
	var m table.Meta
	err := st.DoRetry(ctx, func(c *conn.Conn) error {
		var err error
		m, err = table.Observe(ctx, c.Conn, st.Ident())
		return err
	})
	switch {
	case err != nil:
		return err
	case m.Schema > table.SchemaVersion:
		return fmt.Errorf("%w: table %s: its meta row has schema %d, newer than this leasewrap's %d; nothing was written", lease.ErrRefused, st.Ident(), m.Schema, table.SchemaVersion)
	case f.ttl() > m.MaxTTL:
		return fmt.Errorf("%w: --ttl %v is above the largest TTL of table %s, %v: after a failover nothing is granted for that largest TTL plus %v, so a longer lease could outlive that quarantine; use a shorter --ttl, or raise it: UPDATE %s SET ttl_seconds = N WHERE kind = 'meta' AND name = ''",
			cli.ErrUsage, f.ttl(), st.Ident(), m.MaxTTL, table.QuarantineMargin, st.Ident())
	}
	return nil
}

// config is the supervisor's configuration.
func (f *runFlags) config(l lease.Locker, logger *slog.Logger) supervisor.Config {
	cfg := f.RunFlags.Config(l, logger)
	// The leasewrap binary beside leasewrap-pg, if there is one, plays
	// the job guard without the driver's memory; "" uses this executable.
	cfg.HelperExe = cli.Beside("leasewrap")
	cli.TrimWhenStarted(&cfg) // a sidecar: little resident while it renews
	return cfg
}
