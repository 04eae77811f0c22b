package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/etcd/conn"
	"github.com/leasewrap/leasewrap/etcd/lock"
	"github.com/leasewrap/leasewrap/etcd/once"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/lease/slots"
)

type lockCmd struct {
	Run     lockRunCmd     `cmd:"" help:"Hold the lock NAME while running a command."`
	Holders lockHoldersCmd `cmd:"" help:"Show the queue of lock NAME as JSON (create-revision order; the first holds it)."`
}

type lockRunCmd struct {
	Name string `arg:"" help:"Lock name, used verbatim as etcdctl lock does (keys NAME/<lease id hex>)."`
	connFlags
	runFlags
}

func (c *lockRunCmd) Help() string {
	return `Takes the lock as etcdctl lock does (the two exclude each other), runs the
command with ETCD_LOCK_KEY, ETCD_LOCK_REV, LEASEWRAP_FENCE (the lock key's
create revision: a fencing token), LEASEWRAP_LEASE_ID and
LEASEWRAP_ETCD_ENDPOINTS set, renews the lease while it runs, stops it
(--stop-signal, SIGTERM by default, then SIGKILL after --kill-grace; exit
76) when the lease is lost,
and releases the lock when it ends. --wait 0 tries once; --wait D queues
(FIFO) for up to D.

--slots N allows N holders at once: the locks NAME (slot 0: etcdctl lock
NAME is its holder), NAME-1 … NAME-(N-1), tried in order, the first free
one held; LEASEWRAP_SLOT says which. A waiter then retries with back-off
instead of queueing. lock holders NAME --slots N shows every slot.

Examples:
  leasewrap lock run nightly --endpoints 10.0.0.1:2379,10.0.0.2:2379 -- ./nightly.sh
  leasewrap lock run deploy --wait 10m -- ./deploy.sh
  leasewrap lock run build --slots 3 --wait 1h -- ./build.sh`
}

func (c *lockRunCmd) Validate() error {
	for i := range c.Slots.N() {
		if err := checkLockName(lockSlotName(c.Name, i)); err != nil {
			return err
		}
	}
	return c.runFlags.check()
}

// lockSlotName is slot i's lock name: NAME itself for slot 0 (so that
// --slots 1 is exactly etcdctl lock NAME's protocol, and etcdctl lock NAME
// is slot 0's holder), NAME-i for the others. Each is a lock of its own,
// keys NAME-i/<lease hex>: no slot's keys fall under another's NAME/.
func lockSlotName(name string, i int) string {
	if i == 0 {
		return name
	}
	return name + "-" + strconv.Itoa(i)
}

// checkLockName refuses a lock name whose key range (NAME/…) holds the
// records of `leasewrap once` under its default prefix (leasewrap/once/):
// a lock queues behind every key under NAME/, and those records are
// durable, so it would wait for ever. Such a name is usage (64). The lock
// keys stay exactly etcdctl lock's, NAME/<lease hex>: an `etcdctl lock
// leasewrap` waits behind the same records (docs/ETCD.md).
func checkLockName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: the lock name is empty", cli.ErrUsage)
	}
	if strings.HasPrefix(once.DefaultPrefix, name+"/") {
		return fmt.Errorf("%w: lock name %q covers the etcd keys of leasewrap once (%s…): the lock would queue behind once's durable records for ever; choose a name outside %s",
			cli.ErrUsage, name, once.DefaultPrefix, strings.TrimSuffix(once.DefaultPrefix, "/"))
	}
	return nil
}

func (c *lockRunCmd) Run(ctx context.Context, logger *slog.Logger) error {
	ec, err := c.dial(ctx, c.Name+"/")
	if err != nil {
		return err
	}
	defer ec.Close()
	logger.Debug("etcd answered the dial's probe", "endpoints", c.connFlags.Endpoints)
	holder := c.holder()
	var ls []lease.Locker
	for i := range c.Slots.N() {
		l, err := lock.New(lock.Config{Client: ec, Name: lockSlotName(c.Name, i), TTL: c.ttl(), Holder: holder, Endpoints: c.connFlags.Endpoints, DialTimeout: c.DialTimeout,
			Logger: logger, ReportEvery: c.WaitReportEvery})
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

type lockHoldersCmd struct {
	Name  string `arg:"" help:"Lock name."`
	Slots int    `help:"Show every slot of a lock run with --slots N: the queues of NAME, NAME-1 … NAME-(N-1), each key with its slot." default:"1" placeholder:"N"`
	connFlags
}

func (c *lockHoldersCmd) Validate() error {
	if c.Slots < 1 {
		return fmt.Errorf("%w: --slots %d: at least one", cli.ErrUsage, c.Slots)
	}
	return nil
}

// holderJSON is one queued key.
type holderJSON struct {
	Key            string `json:"key"`
	LeaseID        string `json:"lease_id"`
	CreateRevision int64  `json:"create_revision"`
	TTLRemaining   int64  `json:"ttl_remaining_seconds"` // -1: lease gone
	Holds          bool   `json:"holds"`
	Slot           int    `json:"slot"`
}

func (c *lockHoldersCmd) Run(ctx context.Context, streams ioStreams) error {
	ec, err := c.dial(ctx, c.Name+"/")
	if err != nil {
		return err
	}
	defer ec.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out := []holderJSON{}
	for slot := range c.Slots {
		resp, err := ec.Get(ctx, lockSlotName(c.Name, slot)+"/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
		if err != nil {
			return &cli.ExitError{Code: cli.AdminError, Err: conn.Classify(err)}
		}
		for i, kv := range resp.Kvs {
			h := holderJSON{Key: string(kv.Key), LeaseID: fmt.Sprintf("%x", kv.Lease), CreateRevision: kv.CreateRevision, TTLRemaining: -1, Holds: i == 0, Slot: slot}
			if kv.Lease != 0 {
				if t, err := ec.TimeToLive(ctx, clientv3.LeaseID(kv.Lease)); err == nil {
					h.TTLRemaining = t.TTL
				}
			}
			out = append(out, h)
		}
	}
	if err := writeJSON(streams.Out, out); err != nil {
		return err
	}
	if len(out) == 0 {
		return &cli.ExitError{Code: cli.AdminHeld}
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, strings.TrimSpace(string(b)))
	return err
}
