package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/etcd/conn"
	"github.com/leasewrap/leasewrap/etcd/once"
)

type onceCmd struct {
	Run     onceRunCmd     `cmd:"" help:"Run a command once per KEY across hosts; later runs replay its exit code."`
	Lookup  onceLookupCmd  `cmd:"" help:"Show KEY's record as JSON."`
	Release onceReleaseCmd `cmd:"" help:"Remove KEY's record if it belongs to run --run-id (so the next run runs again)."`
}

type onceKeyFlags struct {
	Key    string `arg:"" help:"The key; one path segment under --prefix (percent-encoded: / becomes %2F)."`
	Prefix string `help:"etcd key prefix of the records." default:"leasewrap/once/"`
	connFlags
}

func (f *onceKeyFlags) etcdKey() string { return once.EtcdKey(f.Prefix, f.Key) }

type onceRunCmd struct {
	onceKeyFlags
	RunID            string `name:"run-id" help:"Run id to record (default: 32 random hex digits)."`
	PublishFailures  bool   `help:"Publish a failed run too, so retries replay the failure instead of running again. A run ended by a signal leasewrap passed on (a shutdown: SIGTERM, SIGINT, SIGHUP, SIGQUIT) is not published, so a retry runs again."`
	PublishSignalled bool   `help:"With --publish-failures, publish a run ended by a signal leasewrap passed on as well."`
	MaxRequestBytes  int    `name:"max-request-bytes" help:"The etcd server's --max-request-bytes: a run whose result record (with its command line) could not be published in one request is refused (64) before anything runs." default:"1572864"`
	runFlags
}

func (c *onceRunCmd) Help() string {
	return `Claims KEY with a create-if-absent transaction attached to the run's lease,
runs the command (LEASEWRAP_RUN_ID, LEASEWRAP_FENCE, LEASEWRAP_ETCD_KEY,
LEASEWRAP_LEASE_ID set), and on exit 0 publishes the exit code durably
(before the fencing deadline only); later runs replay it without running.
A failure removes the record so a retry runs (or, with --publish-failures,
is published; a run stopped by a signal leasewrap passed on, a shutdown,
only with --publish-signalled too). A lost lease publishes nothing (exit 76). With --wait D a
run in flight is waited for (watched), then replayed or competed for.

Examples:
  # every host's cron fires; the migration runs on one of them, once.
  leasewrap once run "migrate-v42" --endpoints etcd:2379 --wait 30m -- ./migrate.sh`
}

func (c *onceRunCmd) Validate() error {
	if c.MaxRequestBytes < 1 {
		return fmt.Errorf("%w: --max-request-bytes %d must be positive (etcd's default is %d)", cli.ErrUsage, c.MaxRequestBytes, once.DefaultMaxRequestBytes)
	}
	if c.PublishSignalled && !c.PublishFailures {
		return fmt.Errorf("%w: --publish-signalled only adds to --publish-failures; give both", cli.ErrUsage)
	}
	if err := c.RunFlags.OneHolder("a once record is one run per key"); err != nil {
		return err
	}
	return c.runFlags.check()
}

func (c *onceRunCmd) Run(ctx context.Context, logger *slog.Logger) error {
	host, _ := os.Hostname()
	cfg := once.Config{Prefix: c.Prefix, Key: c.Key, TTL: c.ttl(), Holder: c.holder(), Host: host,
		RunID: c.RunID, PublishFailures: c.PublishFailures, PublishSignalled: c.PublishSignalled, Endpoints: c.connFlags.Endpoints,
		Argv: c.Command, MaxRequestBytes: c.MaxRequestBytes}
	// Before dialing: a run whose result cannot be recorded never starts.
	if err := once.Check(cfg); err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	ec, err := c.dial(ctx, c.etcdKey())
	if err != nil {
		return err
	}
	defer ec.Close()
	logger.Debug("etcd answered the dial's probe", "endpoints", c.connFlags.Endpoints)
	cfg.Client, cfg.DialTimeout = ec, c.DialTimeout
	cfg.Logger, cfg.ReportEvery = logger, c.WaitReportEvery
	l, err := once.New(cfg)
	if err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	return c.Supervise(ctx, c.config(l, logger))
}

type onceLookupCmd struct {
	onceKeyFlags
}

type onceLookupJSON struct {
	Key            string          `json:"key"`
	EtcdKey        string          `json:"etcd_key"`
	State          string          `json:"state"` // "free", "running" or "done"
	Record         json.RawMessage `json:"record"`
	LeaseID        string          `json:"lease_id,omitempty"`
	CreateRevision int64           `json:"create_revision,omitempty"`
}

// withRecord is the admin verbs' preamble: it dials etcd, reads the record
// of c's key and calls fn with the client, a context bounded for the rest
// of the verb, and the key-value read (nil when there is no record).
func (c *onceKeyFlags) withRecord(ctx context.Context, fn func(ctx context.Context, ec *clientv3.Client, kv *mvccpb.KeyValue) error) error {
	ec, err := c.dial(ctx, c.etcdKey())
	if err != nil {
		return err
	}
	defer ec.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := ec.Get(ctx, c.etcdKey())
	if err != nil {
		return &cli.ExitError{Code: cli.AdminError, Err: conn.Classify(err)}
	}
	var kv *mvccpb.KeyValue
	if len(resp.Kvs) > 0 {
		kv = resp.Kvs[0]
	}
	return fn(ctx, ec, kv)
}

func (c *onceLookupCmd) Run(ctx context.Context, streams ioStreams) error {
	return c.withRecord(ctx, func(_ context.Context, _ *clientv3.Client, kv *mvccpb.KeyValue) error { return c.lookup(streams, kv) })
}

func (c *onceLookupCmd) lookup(streams ioStreams, kv *mvccpb.KeyValue) error {
	out := onceLookupJSON{Key: c.Key, EtcdKey: c.etcdKey(), State: "free", Record: json.RawMessage("null")}
	if kv == nil {
		if err := writeJSON(streams.Out, out); err != nil {
			return err
		}
		return &cli.ExitError{Code: cli.AdminHeld}
	}
	rec, err := once.ParseRecord(kv.Value)
	if err != nil {
		return &cli.ExitError{Code: cli.AdminError, Err: fmt.Errorf("etcd key %s: %v; inspect it with etcdctl get", c.etcdKey(), err)}
	}
	out.State, out.Record, out.CreateRevision = rec.State, json.RawMessage(kv.Value), kv.CreateRevision
	if kv.Lease != 0 {
		out.LeaseID = fmt.Sprintf("%x", kv.Lease)
	}
	return writeJSON(streams.Out, out)
}

type onceReleaseCmd struct {
	onceKeyFlags
	RunID string `name:"run-id" required:"" help:"Remove the record only if it is this run's."`
}

func (c *onceReleaseCmd) Run(ctx context.Context, streams ioStreams) error {
	return c.withRecord(ctx, func(ctx context.Context, ec *clientv3.Client, kv *mvccpb.KeyValue) error {
		return c.release(ctx, streams, ec, kv)
	})
}

func (c *onceReleaseCmd) release(ctx context.Context, streams ioStreams, ec *clientv3.Client, kv *mvccpb.KeyValue) error {
	k := c.etcdKey()
	if kv == nil {
		return &cli.ExitError{Code: cli.AdminHeld, Err: fmt.Errorf("once %q: no record (etcd key %s)", c.Key, k)}
	}
	rec, err := once.ParseRecord(kv.Value)
	if err != nil {
		return &cli.ExitError{Code: cli.AdminError, Err: fmt.Errorf("etcd key %s: %v; not removed, inspect it with etcdctl get", k, err)}
	}
	if rec.RunID != c.RunID {
		return &cli.ExitError{Code: cli.AdminHeld, Err: fmt.Errorf("once %q: the record is run %s's, not %s; not removed", c.Key, rec.RunID, c.RunID)}
	}
	tr, err := ec.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(k), "=", kv.ModRevision)).Then(clientv3.OpDelete(k)).Commit()
	if err != nil {
		return &cli.ExitError{Code: cli.AdminError, Err: conn.Classify(err)}
	}
	if !tr.Succeeded {
		return &cli.ExitError{Code: cli.AdminHeld, Err: fmt.Errorf("once %q: the record changed while releasing; not removed, look again", c.Key)}
	}
	return writeJSON(streams.Out, map[string]any{"key": c.Key, "etcd_key": k, "released": rec.RunID, "state": rec.State})
}
