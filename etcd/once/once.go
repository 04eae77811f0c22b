package once

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
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
const Kind = "once"

// DefaultPrefix is where records live by default.
const DefaultPrefix = "leasewrap/once/"

// Config describes one key.
type Config struct {
	Client *clientv3.Client
	Prefix string
	Key    string
	TTL    time.Duration
	Holder string
	Host   string
	// RunID names this run (default: 32 random hex digits).
	RunID string
	// PublishFailures publishes a failed run too, so retries replay it,
	// except a run ended by a signal leasewrap forwarded (a shutdown,
	// lease.Result.Forwarded) unless PublishSignalled is set too.
	PublishFailures  bool
	PublishSignalled bool
	Endpoints        []string
	// Argv is the command the run records (its published record carries
	// it); New refuses a run whose record could not be published.
	Argv []string
	// MaxRequestBytes is the server's --max-request-bytes (0: etcd's
	// default, DefaultMaxRequestBytes).
	MaxRequestBytes int
	// DialTimeout bounds what a try-once Acquire may wait for etcd, and
	// the clean-up of an attempt given up (0: 5 s), as lock.Config's.
	DialTimeout time.Duration
	// Logger receives a waiter's lines (AcquireWait): whom it waits for
	// when it starts waiting and every ReportEvery after, at info level;
	// each attempt at debug level. nil discards.
	Logger *slog.Logger
	// ReportEvery is how often a waiter says it still waits (default 1m).
	ReportEvery time.Duration
}

// Locker claims the key. It implements lease.Locker and lease.Queuer.
type Locker struct {
	cfg Config
	key string
}

var (
	_ lease.Locker    = (*Locker)(nil)
	_ lease.Queuer    = (*Locker)(nil)
	_ lease.Lease     = (*Lease)(nil)
	_ lease.Confirmed = (*Lease)(nil)
)

// New returns a Locker for cfg.
func New(cfg Config) (*Locker, error) {
	if cfg.Client == nil {
		return nil, errors.New("once: no etcd client")
	}
	return build(cfg)
}

// Check checks cfg as New does, without a client: call it before dialing
// so a run that cannot be recorded is refused before anything is done.
func Check(cfg Config) error {
	_, err := build(cfg)
	return err
}

func build(cfg Config) (*Locker, error) {
	if cfg.Key == "" {
		return nil, errors.New("once: empty key")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if cfg.TTL < time.Second || cfg.TTL%time.Second != 0 {
		return nil, fmt.Errorf("once: TTL %v is not a whole number of seconds >= 1s", cfg.TTL)
	}
	if cfg.RunID == "" {
		var b [16]byte
		rand.Read(b[:])
		cfg.RunID = hex.EncodeToString(b[:])
	}
	if err := checkSize(cfg); err != nil {
		return nil, err
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	return &Locker{cfg: cfg, key: EtcdKey(cfg.Prefix, cfg.Key)}, nil
}

func (l *Locker) Kind() string { return Kind }
func (l *Locker) Key() string  { return l.cfg.Key }

// Holder is the holder identity the record is written with (lease.Identity).
func (l *Locker) Holder() string { return l.cfg.Holder }

// EtcdKey is the record's etcd key.
func (l *Locker) EtcdKey() string { return l.key }

// Acquire tries once: it claims a free key, replays a published one, and
// reports a run in flight as held.
func (l *Locker) Acquire(ctx context.Context) (lease.Lease, error) {
	// Bounded by the dial timeout: etcd answered the dial's probe, so a
	// slower answer now is a connection that died.
	tctx, cancel := context.WithTimeout(ctx, l.cfg.DialTimeout)
	defer cancel()
	s, err := session.Grant(tctx, l.cfg.Client, l.cfg.TTL)
	if err == nil {
		var le lease.Lease
		if le, _, err = l.claim(tctx, s); err == nil {
			return le, nil
		}
		l.revoke(s)
	}
	if ctx.Err() == nil && tctx.Err() != nil {
		return nil, conn.Classify(fmt.Errorf("once %q: etcd did not answer within --dial-timeout %v: %w", l.cfg.Key, l.cfg.DialTimeout, context.DeadlineExceeded))
	}
	return nil, err
}

// AcquireWait claims the key or, while a run is in flight, watches the
// record until it is deleted or published, then replays or competes again,
// until ctx ends. On failure the session is revoked and nothing stays.
//
// It says whom it waits for (the run in flight: holder, host, pid, run id
// and since when) when it starts waiting and at least every ReportEvery
// after, and logs each attempt at debug level.
func (l *Locker) AcquireWait(ctx context.Context) (lease.Lease, error) {
	wl := waitlog.New(l.cfg.Logger, l.cfg.ReportEvery, Kind, l.cfg.Key)
	for {
		// A fresh session per attempt: nothing keeps one alive between.
		s, err := session.Grant(ctx, l.cfg.Client, l.cfg.TTL)
		if err != nil {
			return nil, ctxError(ctx, err, err)
		}
		le, rev, err := l.claim(ctx, s)
		if err == nil {
			return le, nil
		}
		l.revoke(s)
		if !errors.Is(err, lease.ErrHeld) {
			return nil, ctxError(ctx, err, err)
		}
		wl.Attempt("once: a run is in flight; watching its record", "etcd_key", l.key, "held", err.Error())
		if wl.Due() {
			holder, attrs := inFlight(err)
			wl.Report(holder, attrs...)
		}
		// The watch ends when the record changes, or when the next report
		// is due: then the record is read again (an attempt) and reported.
		rctx, cancel := context.WithDeadline(ctx, wl.Next())
		werr := waitChange(rctx, l.cfg.Client, l.key, rev)
		cancel()
		if werr != nil && ctx.Err() == nil && rctx.Err() != nil {
			continue // a report is due
		}
		if werr != nil {
			return nil, ctxError(ctx, err, conn.Classify(werr))
		}
	}
}

// inFlight is the holder a contention error names, and what else it says.
func inFlight(err error) (string, []any) {
	var he *lease.HeldError
	if !errors.As(err, &he) {
		return "unknown", []any{"held", err.Error()}
	}
	holder := he.Holder
	if holder == "" {
		holder = "unknown"
	}
	attrs := he.HolderAttrs()
	if he.Detail != "" {
		attrs = append(attrs, "detail", he.Detail)
	}
	return holder, attrs
}

// ctxError is held when ctx's deadline passed, ctx.Err() when it was
// cancelled, else err.
func ctxError(ctx context.Context, held, err error) error {
	switch {
	case ctx.Err() == nil:
		return err
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		if errors.Is(held, lease.ErrHeld) {
			return held
		}
		return &lease.HeldError{Kind: Kind, Key: "", Detail: "not acquired within --wait"}
	}
	return ctx.Err()
}

// revoke gives up an attempt's session, bounded by the dial timeout.
func (l *Locker) revoke(s *session.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.DialTimeout)
	defer cancel()
	s.Revoke(ctx)
}

// claim runs the create-if-absent transaction. On contention it returns
// an error matching ErrHeld and the revision to watch from.
func (l *Locker) claim(ctx context.Context, s *session.Session) (lease.Lease, int64, error) {
	host := l.cfg.Host
	rec := &Record{State: StateRunning, RunID: l.cfg.RunID, Holder: l.cfg.Holder, Host: host,
		PID: os.Getpid(), Started: time.Now().UTC()}
	resp, err := l.cfg.Client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(l.key), "=", 0)).
		Then(clientv3.OpPut(l.key, rec.marshal(), clientv3.WithLease(s.ID()))).
		Else(clientv3.OpGet(l.key)).Commit()
	if err != nil {
		return nil, 0, conn.Classify(fmt.Errorf("once %q: claim %s: %w", l.cfg.Key, l.key, err))
	}
	if resp.Succeeded {
		rev := resp.Header.Revision
		s.Watch(l.key, rev+1, rev)
		return &Lease{l: l, s: s, createRev: rev, rec: rec}, 0, nil
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 { // deleted between compare and get: impossible in one txn
		return nil, resp.Header.Revision, &lease.HeldError{Kind: Kind, Key: l.cfg.Key, Detail: "record vanished; retry"}
	}
	other, perr := ParseRecord(kvs[0].Value)
	if perr != nil {
		return nil, 0, fmt.Errorf("once %q: etcd key %s holds something else (%v); leasewrap will not touch it: inspect it with etcdctl get %s, remove it by hand if it is stale: %w",
			l.cfg.Key, l.key, perr, l.key, lease.ErrRefused)
	}
	if err := other.replayable(kvs[0].Lease != 0); err != nil {
		return nil, 0, fmt.Errorf("once %q: etcd key %s %v; leasewrap will not replay or wait on it. Inspect it with etcdctl get %s; when sure no run works on it, remove it with: leasewrap once release %s --run-id %s --prefix %s (the next run then runs): %w",
			l.cfg.Key, l.key, err, l.key, shellQuote(l.cfg.Key), shellQuote(other.RunID), shellQuote(l.cfg.Prefix), lease.ErrRefused)
	}
	if other.State == StateDone {
		return nil, 0, &lease.ReplayError{Kind: Kind, Key: l.cfg.Key, ExitCode: *other.ExitCode,
			Summary: fmt.Sprintf("run %s on %s finished %s with exit code %d", other.RunID, other.Host, fmtTime(other.Finished), *other.ExitCode)}
	}
	return nil, resp.Header.Revision, &lease.HeldError{Kind: Kind, Key: l.cfg.Key, Holder: other.Holder, PID: other.PID, Host: other.Host,
		Detail: fmt.Sprintf("run %s in flight since %s", other.RunID, other.Started.Format(time.RFC3339))}
}

func fmtTime(t *time.Time) string {
	if t == nil {
		return "?"
	}
	return t.Format(time.RFC3339)
}

// waitChange blocks until key changes after revision rev (deleted or
// rewritten), or ctx ends.
func waitChange(ctx context.Context, cli *clientv3.Client, key string, rev int64) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for wr := range cli.Watch(wctx, key, clientv3.WithRev(rev+1)) {
		if wr.CompactRevision != 0 || len(wr.Events) > 0 {
			return nil
		}
		if err := wr.Err(); err != nil {
			return nil // look again
		}
	}
	return ctx.Err()
}

// Lease is a claimed key.
type Lease struct {
	l         *Locker
	s         *session.Session
	createRev int64
	rec       *Record
}

// Env describes the run to the child.
func (le *Lease) Env() []string {
	return []string{
		"LEASEWRAP_RUN_ID=" + le.rec.RunID,
		"LEASEWRAP_ETCD_KEY=" + le.l.key,
		"LEASEWRAP_FENCE=" + strconv.FormatInt(le.createRev, 10),
		"LEASEWRAP_LEASE_ID=" + le.s.Hex(),
		"LEASEWRAP_ETCD_ENDPOINTS=" + strings.Join(le.l.cfg.Endpoints, ","),
	}
}

// RunID is this run's id.
func (le *Lease) RunID() string { return le.rec.RunID }

// Holder is the holder identity recorded (LEASEWRAP_HOLDER).
func (le *Lease) Holder() string { return le.rec.Holder }

func (le *Lease) TTL() time.Duration              { return le.s.TTL() }
func (le *Lease) Renew(ctx context.Context) error { return le.s.Renew(ctx) }

// ConfirmedAt is the start of the latest grant or keep-alive of the
// record's lease (lease.Confirmed).
func (le *Lease) ConfirmedAt() time.Time { return le.s.ConfirmedAt() }

// Done is closed when the session expires or the record is deleted or
// replaced (watched).
func (le *Lease) Done() <-chan struct{} { return le.s.Lost() }

// LossCause says why Done closed (lease.LossCause): the record's key
// deleted or created again by another.
func (le *Lease) LossCause() error { return le.s.LossCause() }

// Finish publishes or releases. Success (or any result with
// PublishFailures, but one ended by a forwarded signal only with
// PublishSignalled) is published only before res.Fence and never after a
// loss or a passed fence (lease.ErrLost: nothing published, the record
// expires with the lease and a retry runs). A failure deletes the record
// if it is still ours. The session is revoked in every case.
func (le *Lease) Finish(ctx context.Context, res lease.Result) error {
	le.s.Close() // no renewal after this, ever
	defer le.l.revoke(le.s)
	if res.Lost {
		return nil
	}
	if res.PastFence {
		return fmt.Errorf("once %q: the fencing deadline passed before the run was settled; nothing published, a retry will run: %w", le.l.cfg.Key, lease.ErrLost)
	}
	if res.ExitCode != 0 && (!le.l.cfg.PublishFailures || (res.Forwarded != 0 && !le.l.cfg.PublishSignalled)) {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		// Best effort: the revoke below deletes the record too, and
		// otherwise it expires with the lease.
		le.l.cfg.Client.Txn(dctx).
			If(clientv3.Compare(clientv3.CreateRevision(le.l.key), "=", le.createRev)).
			Then(clientv3.OpDelete(le.l.key)).Commit()
		return nil
	}
	if !res.Fence.IsZero() {
		if !time.Now().Before(res.Fence) {
			return fmt.Errorf("once %q: past the fencing deadline; nothing published, a retry will run: %w", le.l.cfg.Key, lease.ErrLost)
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, res.Fence)
		defer cancel()
	}
	done := *le.rec
	done.State = StateDone
	code := res.ExitCode
	done.ExitCode = &code
	fin := res.Finished.UTC()
	if res.Finished.IsZero() {
		fin = time.Now().UTC()
	}
	done.Finished = &fin
	done.Argv = res.Argv
	// A put without a lease detaches the record from the session: durable.
	resp, err := le.l.cfg.Client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(le.l.key), "=", le.createRev)).
		Then(clientv3.OpPut(le.l.key, done.marshal())).Commit()
	if err != nil {
		return fmt.Errorf("once %q: publish before the fencing deadline failed (%v); the result may or may not be recorded: %w", le.l.cfg.Key, err, lease.ErrLost)
	}
	if !resp.Succeeded {
		return fmt.Errorf("once %q: the record is no longer ours; nothing published: %w", le.l.cfg.Key, lease.ErrLost)
	}
	return nil
}
