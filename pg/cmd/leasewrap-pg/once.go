package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"time"

	"crypto/rand"
	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/pg/conn"
	"github.com/leasewrap/leasewrap/pg/lock"
	"github.com/leasewrap/leasewrap/pg/once"
	"github.com/leasewrap/leasewrap/pg/table"
)

type pgOnceCmd struct {
	Key              string `arg:"" help:"The key (the row's name; any text)."`
	RunID            string `name:"run-id" help:"Run id to record (default: 32 random hex digits)."`
	PublishFailures  bool   `help:"Publish a failed run too, so later runs replay the failure instead of running again. A run ended by a signal leasewrap passed on (a shutdown) is not published, so a retry runs again."`
	PublishSignalled bool   `help:"With --publish-failures, publish a run ended by a signal leasewrap passed on as well."`
	connFlags
	runFlags
}

func (c *pgOnceCmd) Help() string {
	return `Takes the row (kind pg-once, KEY) of --table as pg run takes its lease, runs
the command (LEASEWRAP_RUN_ID, LEASEWRAP_FENCE, LEASEWRAP_PG_TABLE set), and
on exit 0 publishes the exit code in the row (before the fencing deadline
only); later runs replay it without running. A failure frees the row so a
retry runs (or, with --publish-failures, is published). A lost lease
publishes nothing (exit 76). With --wait D a run in flight is waited for,
then replayed. pg release KEY --run-id ID makes the next run run again.

Example:
  # every host's cron fires; the migration runs on one of them, once.
  leasewrap pg once migrate-v42 --wait 30m -- ./migrate.sh`
}

func (c *pgOnceCmd) Validate() error {
	if c.Key == "" {
		return fmt.Errorf("%w: the key is empty", cli.ErrUsage)
	}
	if c.PublishSignalled && !c.PublishFailures {
		return fmt.Errorf("%w: --publish-signalled only adds to --publish-failures; give both", cli.ErrUsage)
	}
	if err := c.RunFlags.OneHolder("a once row is one run per key"); err != nil {
		return err
	}
	return c.runFlags.check()
}

func (c *pgOnceCmd) Run(ctx context.Context, logger *slog.Logger) error {
	st, err := c.store()
	if err != nil {
		return err
	}
	defer st.Close()
	if err := c.prepare(ctx, st); err != nil {
		return err
	}
	runID := c.RunID
	if runID == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		runID = hex.EncodeToString(b)
	}
	host, _ := os.Hostname()
	l, err := once.New(once.Config{Config: lock.Config{Store: st, Name: c.Key, TTL: c.ttl(), Holder: c.holder(), RunID: runID,
		Timeout: c.DialTimeout, Notify: !c.NoNotify, Logger: logger},
		Host: host, Argv: c.Command, PublishFailures: c.PublishFailures, PublishSignalled: c.PublishSignalled})
	if err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	return c.Supervise(ctx, c.config(l, logger))
}

func (c *pgOnceCmd) LeaseName() (string, string) { return once.Kind, c.Key }

type pgLookupCmd struct {
	Key string `arg:"" help:"The key."`
	connFlags
}

func (c *pgLookupCmd) Run(ctx context.Context, streams ioStreams) error {
	rows, err := c.readRows(ctx, once.Kind, []string{c.Key})
	if err != nil {
		return adminError(err)
	}
	if err := writeJSON(streams.Out, rows[0]); err != nil {
		return &cli.ExitError{Code: cli.AdminError, Err: err}
	}
	if !rows[0].Held && rows[0].State != "done" {
		return &cli.ExitError{Code: cli.AdminHeld}
	}
	return nil
}

type pgReleaseCmd struct {
	Key   string `arg:"" help:"The key."`
	RunID string `name:"run-id" required:"" help:"Free the row only if this run finished it (or held it and it expired)."`
	connFlags
}

func (c *pgReleaseCmd) Run(ctx context.Context, streams ioStreams) error {
	st, err := c.store()
	if err != nil {
		return adminError(err)
	}
	st.ReadOnly()
	defer st.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*c.DialTimeout+10*time.Second)
	defer cancel()
	var ok bool
	err = st.DoRetry(ctx, func(cn *conn.Conn) error {
		var err error
		ok, err = table.ReleaseRun(ctx, cn.Conn, st.Ident(), once.Kind, c.Key, c.RunID)
		return err
	})
	if err != nil {
		return adminError(err)
	}
	if !ok {
		return &cli.ExitError{Code: cli.AdminHeld, Err: fmt.Errorf("once %q: no finished row of run %s in %s; nothing released (see pg lookup %s)", c.Key, c.RunID, st.Ident(), c.Key)}
	}
	return writeJSON(streams.Out, map[string]any{"key": c.Key, "table": st.Ident(), "released": c.RunID})
}
