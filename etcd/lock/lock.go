package lock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasewrap/leasewrap/etcd/conn"
	"github.com/leasewrap/leasewrap/etcd/internal/session"
	"github.com/leasewrap/leasewrap/etcd/internal/waitlog"
	"github.com/leasewrap/leasewrap/lease"
)

// Kind is the lease kind's name (LEASEWRAP_KIND).
const Kind = "lock"

// Config describes one lock.
type Config struct {
	Client *clientv3.Client
	// Name is the lock's name, used verbatim as etcdctl lock does: keys
	// live under Name + "/".
	Name string
	// TTL asked for the session lease (whole seconds; the server may
	// grant more).
	TTL time.Duration
	// Holder is this wrapper's identity (LEASEWRAP_HOLDER).
	Holder string
	// Endpoints are exported to the child (LEASEWRAP_ETCD_ENDPOINTS).
	Endpoints []string
	// DialTimeout bounds what a try-once Acquire may wait for etcd (grant
	// and queue), and the clean-up of an abandoned place in the queue:
	// a connection that dies after the dial is then 69 within it, not
	// after gRPC's keep-alive notices. 0 means 5 s.
	DialTimeout time.Duration
	// Logger receives a waiter's lines (AcquireWait): whom it waits for
	// when it starts waiting and every ReportEvery after, at info level;
	// each look at the queue at debug level. nil discards.
	Logger *slog.Logger
	// ReportEvery is how often a waiter says it still waits (default 1m).
	ReportEvery time.Duration
}

// Locker takes the lock. It implements lease.Locker and lease.Queuer.
type Locker struct {
	cfg Config
	pfx string
}

// New returns a Locker for cfg.
func New(cfg Config) (*Locker, error) {
	if cfg.Client == nil {
		return nil, errors.New("lock: no etcd client")
	}
	if cfg.Name == "" {
		return nil, errors.New("lock: empty lock name")
	}
	if cfg.TTL < time.Second || cfg.TTL%time.Second != 0 {
		return nil, fmt.Errorf("lock: TTL %v is not a whole number of seconds >= 1s", cfg.TTL)
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	return &Locker{cfg: cfg, pfx: cfg.Name + "/"}, nil
}

var (
	_ lease.Locker    = (*Locker)(nil)
	_ lease.Queuer    = (*Locker)(nil)
	_ lease.Lease     = (*Lease)(nil)
	_ lease.Confirmed = (*Lease)(nil)
)

func (l *Locker) Kind() string { return Kind }
func (l *Locker) Key() string  { return l.cfg.Name }

// Holder is the holder identity the lock is taken as (lease.Identity).
func (l *Locker) Holder() string { return l.cfg.Holder }

// Acquire tries once (a try-lock): it queues, and if it is not first it
// removes its key and revokes its lease, and reports the holder.
func (l *Locker) Acquire(ctx context.Context) (lease.Lease, error) {
	// The whole try is bounded by the dial timeout: etcd answered the
	// dial's probe, so a slower answer now is a connection that died.
	tctx, cancel := context.WithTimeout(ctx, l.cfg.DialTimeout)
	defer cancel()
	c, err := l.enqueue(tctx)
	if err != nil {
		if ctx.Err() == nil && tctx.Err() != nil {
			return nil, conn.Classify(fmt.Errorf("lock %q: etcd did not answer within --dial-timeout %v: %w", l.cfg.Name, l.cfg.DialTimeout, context.DeadlineExceeded))
		}
		return nil, err
	}
	if c.owner == nil || c.owner.CreateRevision == c.myRev {
		return l.held(ctx, c, c.hdrRev)
	}
	c.abandon()
	return nil, l.heldError(string(c.owner.Key), "")
}

// AcquireWait queues and waits its turn until ctx ends. On failure its
// key is deleted and its lease revoked; the error matches lease.ErrHeld
// when ctx's deadline passed, else it is ctx.Err() or the failure. A
// waiter whose queue key goes while it waits (its lease revoked or
// expired, the key deleted) lost its place, not a lock: nothing ran, so
// it queues again at the tail while ctx lasts.
func (l *Locker) AcquireWait(ctx context.Context) (lease.Lease, error) {
	for {
		le, requeue, err := l.acquireWaitOnce(ctx)
		if !requeue {
			return le, err
		}
		if ctx.Err() != nil {
			return nil, ctxError(ctx, l.heldError("", "lost its place in the queue ("+err.Error()+") and not acquired within --wait"))
		}
	}
}

// acquireWaitOnce is one place in the queue. requeue reports that the
// place was lost (err says how) while ctx may still allow another.
func (l *Locker) acquireWaitOnce(ctx context.Context) (le lease.Lease, requeue bool, err error) {
	c, err := l.enqueue(ctx)
	if err != nil {
		return nil, false, err
	}
	hdrRev := c.hdrRev
	if c.owner != nil && c.owner.CreateRevision != c.myRev {
		wl := waitlog.New(l.cfg.Logger, l.cfg.ReportEvery, Kind, l.cfg.Name)
		l.report(ctx, c, wl)
		rev, err := l.waitTurnAlive(ctx, c, wl)
		if err != nil {
			c.abandon()
			switch {
			case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
				return nil, false, l.heldError(string(c.owner.Key), "not acquired within --wait")
			case errors.Is(err, lease.ErrLost), errors.Is(err, errVanished):
				return nil, true, err // our queue lease or key is gone: queue again
			case ctx.Err() != nil:
				return nil, false, ctxError(ctx, l.heldError(string(c.owner.Key), "not acquired within --wait"))
			}
			return nil, false, conn.Classify(err)
		}
		hdrRev = rev
	}
	le, err = l.held(ctx, c, hdrRev)
	return le, false, err
}

// ctxError is held for a passed deadline, else ctx.Err().
func ctxError(ctx context.Context, held error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return held
	}
	return ctx.Err()
}

func (l *Locker) heldError(ownerKey, detail string) error {
	return &lease.HeldError{Kind: Kind, Key: l.cfg.Name, Holder: ownerKey, Detail: detail}
}

// contender is a queued key and its session.
type contender struct {
	// cleanup bounds abandon (the locker's dial timeout).
	cleanup time.Duration
	s       *session.Session
	key     string
	myRev   int64
	hdrRev  int64
	owner   *kv
}

type kv struct {
	Key            []byte
	CreateRevision int64
}

// abandon deletes the queue key (if still ours) and revokes the session,
// under a fresh bounded context.
func (c *contender) abandon() {
	ctx, cancel := context.WithTimeout(context.Background(), c.cleanup)
	defer cancel()
	deleteIfOurs(ctx, c.s, c.key, c.myRev)
	c.s.Revoke(ctx)
}

// enqueue grants a session and runs the mutex's acquire transaction: if
// our key does not exist, put it with the lease and read the first-created
// key under the prefix; else read both.
func (l *Locker) enqueue(ctx context.Context) (*contender, error) {
	s, err := session.Grant(ctx, l.cfg.Client, l.cfg.TTL)
	if err != nil {
		return nil, err
	}
	c := &contender{s: s, key: l.pfx + s.Hex(), cleanup: l.cfg.DialTimeout}
	cmp := clientv3.Compare(clientv3.CreateRevision(c.key), "=", 0)
	put := clientv3.OpPut(c.key, "", clientv3.WithLease(s.ID()))
	get := clientv3.OpGet(c.key)
	getOwner := clientv3.OpGet(l.pfx, clientv3.WithFirstCreate()...)
	resp, err := l.cfg.Client.Txn(ctx).If(cmp).Then(put, getOwner).Else(get, getOwner).Commit()
	if err != nil {
		c.abandon()
		return nil, conn.Classify(fmt.Errorf("lock %q: queue %s: %w", l.cfg.Name, c.key, err))
	}
	c.myRev, c.hdrRev = resp.Header.Revision, resp.Header.Revision
	if !resp.Succeeded {
		c.myRev = resp.Responses[0].GetResponseRange().Kvs[0].CreateRevision
	}
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
		c.owner = &kv{Key: kvs[0].Key, CreateRevision: kvs[0].CreateRevision}
	}
	return c, nil
}

// errVanished is our queue key gone while we waited (its lease revoked or
// expired, the key deleted): a session that expired while waiting must
// not hold the lock, as client 3.5+ checks.
var errVanished = errors.New("our queue key vanished while waiting (lease revoked or expired)")

// waitTurnAlive waits for our turn while keeping our queue key's lease
// alive (one keep-alive every third of the TTL; no fence applies yet: the
// lock is not held), and returns the revision of the read that found it.
// A lease lost while waiting ends the wait.
func (l *Locker) waitTurnAlive(ctx context.Context, c *contender, wl *waitlog.Log) (int64, error) {
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	defer func() { <-done }()
	go func() { // ended by cancel when waitTurn returns
		defer close(done)
		t := time.NewTicker(c.s.TTL() / 3)
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
				if err := c.s.KeepAlive(wctx); errors.Is(err, lease.ErrLost) {
					cancel(err)
					return
				}
			}
		}
	}()
	rev, err := l.waitTurn(wctx, c, wl)
	if cause := context.Cause(wctx); err != nil && errors.Is(cause, lease.ErrLost) {
		return 0, cause
	}
	cancel(nil)
	return rev, err
}

// waitTurn waits until no key under the prefix was created before ours
// while ours still exists: it watches the last one created before ours
// until it is deleted, and repeats. Each look is one transaction that
// reads the key ahead, and the first key, only if our own key is still
// ours. When the key ahead is the first (we are next), the watch covers
// our key too and its delete event is the turn: no read follows it (see
// waitNext). Otherwise the hand-over costs one round trip after the
// delete event. It returns the revision at which our turn was seen, or
// errVanished. Each look at the queue is logged at debug level; when a
// report is due (wl), the watch is left to say whom it waits for, then
// resumed.
func (l *Locker) waitTurn(ctx context.Context, c *contender, wl *waitlog.Log) (int64, error) {
	cli := l.cfg.Client
	ours := clientv3.Compare(clientv3.CreateRevision(c.key), "=", c.myRev)
	ahead := clientv3.OpGet(l.pfx, append(clientv3.WithLastCreate(), clientv3.WithMaxCreateRev(c.myRev-1))...)
	first := clientv3.OpGet(l.pfx, clientv3.WithFirstCreate()...)
	for {
		resp, err := cli.Txn(ctx).If(ours).Then(ahead, first).Commit()
		if err != nil {
			return 0, err
		}
		if !resp.Succeeded {
			return 0, fmt.Errorf("lock %q: queue key %s: %w", l.cfg.Name, c.key, errVanished)
		}
		pred := resp.Responses[0].GetResponseRange().Kvs
		if len(pred) == 0 {
			return resp.Header.Revision, nil
		}
		head := resp.Responses[1].GetResponseRange().Kvs
		next := len(head) > 0 && string(head[0].Key) == string(pred[0].Key)
		wl.Attempt("lock queue: waiting for the key ahead of ours to be deleted", "ahead", string(pred[0].Key), "ours", c.key, "next", next)
		for {
			rctx, cancel := context.WithDeadline(ctx, wl.Next())
			var turn int64
			if next {
				turn, err = waitNext(rctx, cli, string(pred[0].Key), c.key, c.myRev, resp.Header.Revision)
			} else {
				err = waitDelete(rctx, cli, string(pred[0].Key), resp.Header.Revision)
			}
			cancel()
			if err == nil && turn > 0 {
				return turn, nil
			}
			if err == nil {
				break // deleted, or the watch ended: read the queue again
			}
			if ctx.Err() != nil {
				return 0, err
			}
			l.report(ctx, c, wl) // a report was due
		}
	}
}

// waitNext waits for our turn when the key ahead of ours, pred, is the
// first in the queue: at revision rev no other key was created before
// ours, and none can be later (create revisions only grow). One watch,
// from rev+1, covers the key range from pred to ours, both included, so
// its events come in revision order: pred's deletion at revision R with no
// event on our key at or before R proves that at R our key was still ours
// and first, which is the turn (R is returned). Any event on our key, a
// compaction or the watch's end returns 0: the caller reads the queue
// again. Other waiters' keys in the range are ignored.
func waitNext(ctx context.Context, cli *clientv3.Client, pred, ours string, myRev, rev int64) (int64, error) {
	lo, hi := min(pred, ours), max(pred, ours)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for wr := range cli.Watch(wctx, lo, clientv3.WithRange(hi+"\x00"), clientv3.WithRev(rev+1)) {
		if wr.CompactRevision != 0 {
			return 0, nil
		}
		turn := int64(0)
		for _, ev := range wr.Events {
			if turn > 0 && ev.Kv.ModRevision > turn {
				break // later than the turn: not our business here
			}
			switch string(ev.Kv.Key) {
			case ours:
				if ev.Type == clientv3.EventTypeDelete || ev.Kv.CreateRevision != myRev {
					return 0, nil // ours is gone or another's: read again
				}
			case pred:
				if ev.Type == clientv3.EventTypeDelete && turn == 0 {
					turn = ev.Kv.ModRevision
				}
			}
		}
		if turn > 0 {
			return turn, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return 0, nil // the watch ended: the caller reads the queue again
}

// report says whom the waiter waits for: the holder's key and lease, the
// holder lease's TTL left, and how many keys are ahead of ours. Its reads
// are bounded (2 s); what could not be read is left out.
func (l *Locker) report(ctx context.Context, c *contender, wl *waitlog.Log) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cli := l.cfg.Client
	holder := "unknown"
	var attrs []any
	if c.owner != nil {
		holder = string(c.owner.Key)
	}
	if resp, err := cli.Get(ctx, l.pfx, clientv3.WithFirstCreate()...); err == nil && len(resp.Kvs) > 0 {
		kv := resp.Kvs[0]
		holder = string(kv.Key)
		attrs = append(attrs, "holder_lease", fmt.Sprintf("%x", kv.Lease), "holder_create_revision", kv.CreateRevision)
		if kv.Lease != 0 {
			if t, err := cli.TimeToLive(ctx, clientv3.LeaseID(kv.Lease)); err == nil && t.TTL >= 0 {
				attrs = append(attrs, "holder_ttl_left", time.Duration(t.TTL)*time.Second)
			}
		}
	}
	// Keys only, counted here: etcd's count ignores the create-revision filter.
	if resp, err := cli.Get(ctx, l.pfx, clientv3.WithPrefix(), clientv3.WithMaxCreateRev(c.myRev-1), clientv3.WithKeysOnly()); err == nil {
		attrs = append(attrs, "ahead_of_us", len(resp.Kvs))
	}
	wl.Report(holder, attrs...)
}

// waitDelete blocks until key is deleted after revision rev.
func waitDelete(ctx context.Context, cli *clientv3.Client, key string, rev int64) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for wr := range cli.Watch(wctx, key, clientv3.WithRev(rev+1), clientv3.WithFilterPut()) {
		if wr.CompactRevision != 0 {
			return nil // look again: the caller re-reads the queue
		}
		for _, ev := range wr.Events {
			if ev.Type == clientv3.EventTypeDelete {
				return nil
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return nil // the watch ended: the caller re-reads the queue
}

// held starts watching our key and returns the Lease.
func (l *Locker) held(ctx context.Context, c *contender, hdrRev int64) (lease.Lease, error) {
	c.s.Watch(c.key, hdrRev+1, c.myRev)
	return &Lease{l: l, c: c, hdrRev: hdrRev}, nil
}

// Lease is a held lock.
type Lease struct {
	l      *Locker
	c      *contender
	hdrRev int64
}

// Env describes the lock to the child: etcdctl's ETCD_LOCK_KEY and
// ETCD_LOCK_REV (the response header revision at acquisition; it orders
// holders but is not a fencing token), LEASEWRAP_FENCE (the key's create
// revision: the token), LEASEWRAP_LEASE_ID and LEASEWRAP_ETCD_ENDPOINTS.
func (le *Lease) Env() []string {
	return []string{
		"ETCD_LOCK_KEY=" + le.c.key,
		"ETCD_LOCK_REV=" + strconv.FormatInt(le.hdrRev, 10),
		"LEASEWRAP_FENCE=" + strconv.FormatInt(le.c.myRev, 10),
		"LEASEWRAP_LEASE_ID=" + le.c.s.Hex(),
		"LEASEWRAP_ETCD_ENDPOINTS=" + strings.Join(le.l.cfg.Endpoints, ","),
	}
}

// Key is the lock key (NAME/<lease hex>) and Fence its create revision.
func (le *Lease) LockKey() string { return le.c.key }
func (le *Lease) Fence() int64    { return le.c.myRev }

// TTL is the TTL the server granted.
func (le *Lease) TTL() time.Duration { return le.c.s.TTL() }

// Renew sends one keep-alive; see session.Session.Renew.
func (le *Lease) Renew(ctx context.Context) error { return le.c.s.Renew(ctx) }

// ConfirmedAt is the start of the latest grant or keep-alive of the
// lock's lease, the waiter's own keep-alives in the queue included
// (lease.Confirmed).
func (le *Lease) ConfirmedAt() time.Time { return le.c.s.ConfirmedAt() }

// Holder is this wrapper's identity (LEASEWRAP_HOLDER).
func (le *Lease) Holder() string { return le.l.cfg.Holder }

// Done is closed when our key was deleted (or the lease revoked).
func (le *Lease) Done() <-chan struct{} { return le.c.s.Lost() }

// LossCause says why Done closed (lease.LossCause): the lock's key
// deleted or created again by another.
func (le *Lease) LossCause() error { return le.c.s.LossCause() }

// Finish releases the lock: it stops renewal for good, deletes the key if
// its create revision is still ours, and revokes the lease. A lock whose
// fence passed before the job ended is not settled as a success: the error
// matches lease.ErrLost.
func (le *Lease) Finish(ctx context.Context, res lease.Result) error {
	le.c.s.Close()
	// Best effort: if either fails the lease expires by itself within its
	// TTL, and the job's result stands.
	deleteIfOurs(ctx, le.c.s, le.c.key, le.c.myRev)
	le.c.s.Revoke(ctx)
	if res.PastFence && !res.Lost {
		return fmt.Errorf("lock %q: the fencing deadline passed before the job was settled; not reporting success: %w", le.l.cfg.Name, lease.ErrLost)
	}
	return nil
}

// deleteIfOurs deletes key only while its create revision is rev (an
// unguarded retry could delete a newer holder's key).
func deleteIfOurs(ctx context.Context, s *session.Session, key string, rev int64) error {
	ctx, cancel := context.WithTimeout(ctx, max(s.AttemptTimeout(), 2*time.Second))
	defer cancel()
	_, err := s.Client().Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", rev)).
		Then(clientv3.OpDelete(key)).Commit()
	if err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}
