package kubelease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/leasewrap/leasewrap/lease"
)

// Kind is the lease kind's name (LEASEWRAP_KIND).
const Kind = "kube"

// Defaults, client-go's where it has one (component-base's leader
// election defaults: 15 s duration, 2 s retry period).
const (
	DefaultTTL            = 15 * time.Second
	DefaultSkew           = 5 * time.Second
	DefaultRequestTimeout = 5 * time.Second
	DefaultRetryPeriod    = 2 * time.Second
)

// Config describes one Lease object and how this holder takes it.
type Config struct {
	// Client reaches the API server's coordination.k8s.io/v1 Leases
	// (NewClient's, or client-go's typed client behind a one-line adapter).
	Client LeasesGetter
	// Namespace and Name of the Lease object.
	Namespace, Name string
	// Identity is written as holderIdentity (LEASEWRAP_HOLDER).
	Identity string
	// TTL is leaseDurationSeconds (whole seconds, >= 1 s; default 15 s).
	TTL time.Duration
	// Skew is the clock-skew margin added to renewTime + duration when a
	// single reading judges a holder's liveness (0: none; the
	// command line's default is DefaultSkew).
	Skew time.Duration
	// RequestTimeout bounds every API request outside renewal (acquire,
	// release, the watch's re-reads; default 5 s). A request that does
	// not complete in time is lease.ErrUnavailable (exit 69).
	RequestTimeout time.Duration
	// AttemptTimeout bounds one renewal request (default: a tenth of the
	// TTL, at least 300 ms, at most RequestTimeout).
	AttemptTimeout time.Duration
	// RetryPeriod is how often a waiter reads the object again even when
	// its watch reports nothing (client-go's retry period; default 2 s).
	RetryPeriod time.Duration
	// TakeCoordinated takes a free or expired Lease even when its
	// spec.strategy is set (coordinated leader election), clearing the
	// strategy as client-go's elector does on a takeover. Without it
	// such a Lease is refused (lease.ErrRefused, a *CoordinatedError).
	TakeCoordinated bool
	// Logger receives the kind's warnings (a Role without watch); nil
	// discards them.
	Logger *slog.Logger

	now func() time.Time // wall and monotonic readings; tests replace it
}

// ValidName checks a Lease name (a DNS subdomain) and namespace (a DNS
// label), as the API server would, with a message that says what to fix.
func ValidName(namespace, name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("lease name %q is not a valid Kubernetes object name (a DNS subdomain): %s", name, errs[0])
	}
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return fmt.Errorf("namespace %q is not valid (a DNS label): %s", namespace, errs[0])
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.AttemptTimeout == 0 {
		c.AttemptTimeout = min(max(c.TTL/10, 300*time.Millisecond), c.RequestTimeout)
	}
	if c.RetryPeriod == 0 {
		c.RetryPeriod = DefaultRetryPeriod
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

// Validate rejects a configuration that cannot work, naming the rule.
func (c Config) Validate() error {
	if c.Client == nil {
		return errors.New("kubelease: no API client")
	}
	if err := ValidName(c.Namespace, c.Name); err != nil {
		return err
	}
	if c.Identity == "" {
		return errors.New("kubelease: empty holder identity")
	}
	if c.TTL != 0 && (c.TTL < time.Second || c.TTL%time.Second != 0 || c.TTL > time.Duration(1<<31-1)*time.Second) {
		return fmt.Errorf("lease duration %v must be a whole number of seconds, at least 1s (leaseDurationSeconds)", c.TTL)
	}
	if c.Skew < 0 || c.RequestTimeout < 0 || c.AttemptTimeout < 0 || c.RetryPeriod < 0 {
		return errors.New("kubelease: durations must not be negative")
	}
	return nil
}

// Locker takes one Lease. It implements lease.Locker and lease.Queuer (a
// waiter watches the object and applies client-go's observed-time rule).
// It is used by one goroutine at a time.
type Locker struct {
	cfg     Config
	obs     observer
	noWatch sync.Once // the warning that RBAC forbids watch, given once
}

var (
	_ lease.Locker = (*Locker)(nil)
	_ lease.Queuer = (*Locker)(nil)
)

// New checks cfg and returns a Locker.
func New(cfg Config) (*Locker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Locker{cfg: cfg.withDefaults()}, nil
}

func (l *Locker) Kind() string { return Kind }
func (l *Locker) Key() string  { return l.cfg.Namespace + "/" + l.cfg.Name }

// Identity is the holder identity this Locker takes the Lease as.
func (l *Locker) Identity() string { return l.cfg.Identity }

// Holder is the holderIdentity the Lease is taken as (lease.Identity).
func (l *Locker) Holder() string { return l.cfg.Identity }

func (l *Locker) leases() LeaseInterface { return l.cfg.Client.Leases(l.cfg.Namespace) }

// what names the object in errors.
func (l *Locker) what() string {
	return fmt.Sprintf("Lease %s/%s", l.cfg.Namespace, l.cfg.Name)
}

// Acquire makes one attempt; a held lease is an error matching
// lease.ErrHeld that names the holder.
func (l *Locker) Acquire(ctx context.Context) (lease.Lease, error) {
	le, _, err := l.attempt(ctx)
	if err != nil {
		return nil, err
	}
	return le, nil
}

// attempt reads the object and takes it if it is absent, free or expired.
// It returns the object it read when the lease is held.
func (l *Locker) attempt(ctx context.Context) (*Lease, *coordv1.Lease, error) {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.RequestTimeout)
	defer cancel()
	cur, err := l.leases().Get(ctx, l.cfg.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return l.create(ctx)
	}
	if err != nil {
		return nil, nil, Classify(fmt.Errorf("get %s: %w", l.what(), err), l.what())
	}
	if err := l.refuse(cur.Spec); err != nil {
		return nil, nil, err
	}
	now := l.cfg.now()
	l.obs.see(cur.Spec, now)
	state := judge(cur.Spec, now, l.cfg.Skew)
	if (state == live || state == unknown) && !l.obs.expired(now, l.cfg.TTL) {
		return nil, cur, l.heldError(cur.Spec, state)
	}
	if n := deref(cur.Spec.LeaseTransitions); n >= maxTransitions {
		return nil, nil, fmt.Errorf("%s: %w: leaseTransitions is %d, the largest an int32 holds: a takeover cannot raise the fencing token (client-go's elector would write %d, which the API server rejects); delete the Lease, which restarts the count at 0, after resetting the fences your stores keep (docs/KUBERNETES.md)",
			l.what(), lease.ErrRefused, n, int32(n+1))
	}
	want := cur.DeepCopy()
	want.Spec = takeoverSpec(cur.Spec, l.cfg.Identity, l.cfg.TTL, now)
	got, err := l.leases().Update(ctx, want, metav1.UpdateOptions{})
	switch {
	case apierrors.IsConflict(err), apierrors.IsNotFound(err):
		return nil, cur, &lease.HeldError{Kind: Kind, Key: l.Key(), Detail: "another holder wrote the Lease first (lost the race)"}
	case err != nil:
		return nil, nil, Classify(fmt.Errorf("take over %s (was %s, %s): %w", l.what(), holderName(cur.Spec), state, err), l.what())
	}
	return newLease(l, got, want.Spec), nil, nil
}

// refuse is the error for a Lease that is not leasewrap's to take
// whoever holds it: one that coordinated leader election owns.
func (l *Locker) refuse(s coordv1.LeaseSpec) error {
	if deref(s.Strategy) == "" || l.cfg.TakeCoordinated {
		return nil
	}
	return fmt.Errorf("%s: %w: %w; leasewrap does not take it (--take-coordinated takes it, clearing spec.strategy as client-go's elector does when it takes over)",
		l.what(), lease.ErrRefused, &CoordinatedError{Strategy: string(deref(s.Strategy)), PreferredHolder: deref(s.PreferredHolder)})
}

// ErrNoNamespace reports that the Lease's namespace does not exist (the
// API server answered a Create with 404).
var ErrNoNamespace = errors.New("kubelease: namespace does not exist")

func (l *Locker) create(ctx context.Context) (*Lease, *coordv1.Lease, error) {
	now := l.cfg.now()
	want := &coordv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: l.cfg.Name, Namespace: l.cfg.Namespace},
		Spec:       holderSpec(l.cfg.Identity, l.cfg.TTL, now, now, 0),
	}
	got, err := l.leases().Create(ctx, want, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil, nil, &lease.HeldError{Kind: Kind, Key: l.Key(), Detail: "another holder created the Lease first (lost the race)"}
	}
	if apierrors.IsNotFound(err) {
		return nil, nil, fmt.Errorf("create %s: %w: namespace %q (--namespace, or the kubeconfig context's namespace): %v", l.what(), ErrNoNamespace, l.cfg.Namespace, err)
	}
	if err != nil {
		return nil, nil, Classify(fmt.Errorf("create %s: %w", l.what(), err), l.what())
	}
	return newLease(l, got, want.Spec), nil, nil
}

func holderName(s coordv1.LeaseSpec) string {
	if h := deref(s.HolderIdentity); h != "" {
		return strconv.Quote(showHolder(h))
	}
	return "no holder"
}

func (l *Locker) heldError(s coordv1.LeaseSpec, state liveness) error {
	e := &lease.HeldError{Kind: Kind, Key: l.Key(), Holder: showHolder(deref(s.HolderIdentity))}
	switch {
	case state == unknown:
		e.Detail = "the Lease has no renewTime or leaseDurationSeconds; only a waiter (--wait) can see it expire, by client-go's observed-time rule"
	case deref(s.HolderIdentity) == l.cfg.Identity:
		e.Detail = fmt.Sprintf("identity %q is already the live holder (another run with the same --identity), renewed at %s", e.Holder, s.RenewTime.Format(time.RFC3339))
	default:
		until, _ := liveUntil(s, l.cfg.Skew)
		e.Detail = fmt.Sprintf("renewed at %s for %ds; free after %s", s.RenewTime.Format(time.RFC3339), deref(s.LeaseDurationSeconds), until.Format(time.RFC3339))
	}
	return e
}

// AcquireWait tries until the lease is taken or ctx ends (its deadline is
// the wait). It reads the object again when its watch reports a change,
// when the holder would expire by either rule, and every RetryPeriod. On
// a passed deadline the error matches lease.ErrHeld.
func (l *Locker) AcquireWait(ctx context.Context) (lease.Lease, error) {
	w := newWaker(l)
	defer w.close()
	var last error
	for {
		w.drain()
		le, cur, err := l.attempt(ctx)
		if err == nil {
			return le, nil
		}
		if ctx.Err() != nil {
			return nil, l.waitEnded(ctx, last)
		}
		wait := l.cfg.RetryPeriod
		switch {
		case errors.Is(err, lease.ErrUnavailable) && last != nil:
			// The API server was reachable and the Lease held: a standby
			// keeps waiting through a restart of the API server.
			if err := w.wait(ctx, wait); err != nil {
				return nil, l.waitEnded(ctx, last)
			}
			continue
		case !errors.Is(err, lease.ErrHeld):
			return nil, err
		}
		last = err
		if cur != nil {
			w.watchFrom(cur.ResourceVersion)
			now := l.cfg.now()
			if until, ok := liveUntil(cur.Spec, l.cfg.Skew); ok {
				wait = min(wait, until.Sub(now))
			}
			wait = min(wait, l.obs.expiresAt(l.cfg.TTL).Sub(now))
		}
		if err := w.wait(ctx, max(wait, 10*time.Millisecond)); err != nil {
			return nil, l.waitEnded(ctx, last)
		}
	}
}

// waitEnded is the error of a wait whose ctx ended: held for a passed
// deadline, else ctx's error.
func (l *Locker) waitEnded(ctx context.Context, held error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		if held == nil {
			held = &lease.HeldError{Kind: Kind, Key: l.Key()}
		}
		return fmt.Errorf("not acquired within --wait: %w", held)
	}
	return ctx.Err()
}
