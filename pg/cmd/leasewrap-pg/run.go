package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/lease/slots"
	"github.com/leasewrap/leasewrap/pg/lock"
)

type pgRunCmd struct {
	Name string `arg:"" help:"The lease name (the row's name; any text)."`
	connFlags
	runFlags
}

func (c *pgRunCmd) Help() string {
	return `Takes the row (kind pg, NAME) of --table when it is free or expired, runs the
command with LEASEWRAP_FENCE (a number that grows with every holder of NAME,
across a failover too: a fencing token) and LEASEWRAP_PG_TABLE set, renews
the row every --renew-every (default TTL/3) with an UPDATE guarded by holder
and fence, stops the command (--stop-signal, then SIGKILL after --kill-grace;
exit 76) when a renewal matches no row or none was confirmed in time, and
frees the row when it ends. --wait D retries until D, woken at once by the
release's NOTIFY (--no-notify: polling only).

Each statement is one autocommit statement with the server's time; it works
unchanged through PgBouncer's transaction pooling.
After a failover (the WAL timeline changed) nothing is granted for the
table's largest TTL plus 5s.

--slots N allows N holders at once: NAME (slot 0), NAME-1 … NAME-(N-1),
tried in order; LEASEWRAP_SLOT says which.

Examples:
  leasewrap pg run nightly --dsn 'postgres://job@db1,db2/app?target_session_attrs=read-write' -- ./nightly.sh
  DATABASE_URL=postgres://job@db/app leasewrap pg run deploy --wait 10m -- ./deploy.sh`
}

func (c *pgRunCmd) Validate() error {
	if c.Name == "" {
		return fmt.Errorf("%w: the lease name is empty", cli.ErrUsage)
	}
	return c.runFlags.check()
}

// slotName is slot i's name: NAME for slot 0, NAME-i for the others.
func slotName(name string, i int) string {
	if i == 0 {
		return name
	}
	return name + "-" + strconv.Itoa(i)
}

func (c *pgRunCmd) Run(ctx context.Context, logger *slog.Logger) error {
	st, err := c.store()
	if err != nil {
		return err
	}
	defer st.Close()
	if err := c.prepare(ctx, st); err != nil {
		return err
	}
	holder := c.holder()
	var ls []lease.Locker
	for i := range c.Slots.N() {
		l, err := lock.New(lock.Config{Store: st, Name: slotName(c.Name, i), TTL: c.ttl(), Holder: holder,
			Timeout: c.DialTimeout, Notify: !c.NoNotify, Logger: logger})
		if err != nil {
			return fmt.Errorf("%w: %v", cli.ErrUsage, err)
		}
		ls = append(ls, l)
	}
	if len(ls) == 1 {
		return c.Supervise(ctx, c.config(ls[0], logger))
	}
	l, err := slots.New(ls)
	if err != nil {
		return err
	}
	return c.Supervise(ctx, c.config(l, logger))
}

// The kind and key each run verb's lease will have (cli.LeaseNamer).
func (c *pgRunCmd) LeaseName() (string, string) { return lock.Kind, c.Name }
