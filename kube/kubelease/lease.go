package kubelease

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/leasewrap/leasewrap/internal/ctxsleep"
	"github.com/leasewrap/leasewrap/lease"
)

// remembered is how many of the specs we wrote last are recognised as
// ours (a renewal whose answer was lost may still have been applied).
const remembered = 4

// Lease is a held Lease object. Renew is called from one goroutine at a
// time; Finish once, possibly while an abandoned Renew still runs; Done
// from any goroutine. Only leasewrap renews it (it has a TTL and hands
// the child no descriptor), so the supervisor makes the job die with
// leasewrap (lease.DiesWithLeasewrap).
type Lease struct {
	l     *Locker
	fence int32

	mu      sync.Mutex
	obj     *coordv1.Lease      // the last object the server confirmed
	written []coordv1.LeaseSpec // the specs we wrote last, newest last
	closed  bool                // no renewal after Finish, ever

	lost     chan struct{}
	lostOnce sync.Once
	why      error
	// yield is the object as a coordinated leader election's strategy
	// write left it, while it still named us: Finish releases it, so its
	// coordinator need not wait for it to expire.
	yield *coordv1.Lease

	stop context.CancelFunc
	wg   sync.WaitGroup
}

var (
	_ lease.Lease     = (*Lease)(nil)
	_ lease.LossCause = (*Lease)(nil)
)

// newLease is the lease we just wrote (spec) and the server stored (got);
// it starts the watch that reports loss.
func newLease(l *Locker, got *coordv1.Lease, spec coordv1.LeaseSpec) *Lease {
	ctx, cancel := context.WithCancel(context.Background())
	le := &Lease{
		l:       l,
		fence:   deref(got.Spec.LeaseTransitions),
		obj:     got,
		written: []coordv1.LeaseSpec{spec},
		lost:    make(chan struct{}),
		stop:    cancel,
	}
	le.wg.Add(1)
	go func() { // stopped by Finish, which waits for it
		defer le.wg.Done()
		le.watchLoss(ctx, got.ResourceVersion)
	}()
	return le
}

// Env gives the child LEASEWRAP_FENCE, leaseTransitions after our
// acquisition (the fencing token).
func (le *Lease) Env() []string {
	return []string{"LEASEWRAP_FENCE=" + strconv.FormatInt(int64(le.fence), 10)}
}

// Fence is leaseTransitions after our acquisition.
func (le *Lease) Fence() int32 { return le.fence }

// TTL is leaseDurationSeconds.
func (le *Lease) TTL() time.Duration { return le.l.cfg.TTL }

// Done is closed when the lease is known lost (deleted, rewritten by
// another, or a renewal answered that it is no longer ours).
func (le *Lease) Done() <-chan struct{} { return le.lost }

// Holder is the identity written as holderIdentity (LEASEWRAP_HOLDER).
func (le *Lease) Holder() string { return le.l.cfg.Identity }

func (le *Lease) markLost(err error) {
	le.lostOnce.Do(func() {
		le.why = fmt.Errorf("%s: %w: %w", le.l.what(), err, lease.ErrLost)
		close(le.lost)
	})
}

// LossCause says why the lease was lost once Done is closed (deleted,
// rewritten by another holder, its duration or strategy changed); nil
// before. The error matches lease.ErrLost.
func (le *Lease) LossCause() error { return le.lostErr() }

// notOurs marks the lease lost because of cur, a record we did not
// write, with the reason lossReason gives. A strategy written over our
// own record is remembered for Finish to yield.
func (le *Lease) notOurs(cur *coordv1.Lease) {
	le.mu.Lock()
	last := le.written[len(le.written)-1]
	why := lossReason(cur.Spec, last)
	var ce *CoordinatedError
	if errors.As(why, &ce) {
		bare := *cur.Spec.DeepCopy()
		bare.Strategy, bare.PreferredHolder = last.Strategy, last.PreferredHolder
		if le.oursLocked(bare) && le.yield == nil {
			le.yield = cur.DeepCopy()
		}
	}
	le.mu.Unlock()
	le.markLost(why)
}

func (le *Lease) lostErr() error {
	select {
	case <-le.lost:
		return le.why
	default:
		return nil
	}
}

// ours tells whether s is a record we wrote.
func (le *Lease) ours(s coordv1.LeaseSpec) bool {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.oursLocked(s)
}

func (le *Lease) oursLocked(s coordv1.LeaseSpec) bool {
	if deref(s.HolderIdentity) != le.l.cfg.Identity {
		return false
	}
	for _, w := range le.written {
		if sameSpec(w, s) {
			return true
		}
	}
	return false
}

func (le *Lease) remember(s coordv1.LeaseSpec) {
	le.written = append(le.written, s)
	if len(le.written) > remembered {
		le.written = le.written[len(le.written)-remembered:]
	}
}

// Renew makes one attempt to write renewTime now, with the last
// resourceVersion we know as precondition, bounded by AttemptTimeout. A
// conflict is resolved by one read: if the stored record is one we wrote
// (a metadata change, or an earlier renewal whose answer was lost), the
// write is tried once more on the object as read (its metadata kept);
// otherwise the lease is lost. 404 is loss; anything else (403 included:
// a restarted API server answers it until its RBAC cache is filled) is
// transient, retried until the fence.
func (le *Lease) Renew(ctx context.Context) error {
	le.mu.Lock()
	if le.closed {
		le.mu.Unlock()
		return fmt.Errorf("%s: released, not renewed again: %w", le.l.what(), lease.ErrLost)
	}
	if err := le.lostErr(); err != nil {
		le.mu.Unlock()
		return err
	}
	want := le.obj.DeepCopy()
	want.Spec = renewSpec(want.Spec, le.l.cfg.now())
	le.remember(want.Spec)
	le.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, le.l.cfg.AttemptTimeout)
	defer cancel()
	got, err := le.write(ctx, want)
	if err != nil {
		return err
	}
	le.mu.Lock()
	if !le.closed {
		le.obj = got
	}
	le.mu.Unlock()
	return nil
}

// write updates want (a spec we remembered) and sorts the outcome: loss
// (matching lease.ErrLost, and Done closed) or a transient error.
func (le *Lease) write(ctx context.Context, want *coordv1.Lease) (*coordv1.Lease, error) {
	leases := le.l.leases()
	got, err := leases.Update(ctx, want, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		var cur *coordv1.Lease
		cur, err = leases.Get(ctx, le.l.cfg.Name, metav1.GetOptions{})
		switch {
		case err == nil && !le.ours(cur.Spec):
			le.notOurs(cur)
			return nil, le.why
		case err == nil:
			// Our spec on the object as it is now (its labels and
			// annotations kept, its resourceVersion the precondition).
			spec := want.Spec
			want = cur.DeepCopy()
			want.Spec = spec
			got, err = leases.Update(ctx, want, metav1.UpdateOptions{})
		}
	}
	switch {
	case err == nil:
		return got, nil
	case apierrors.IsNotFound(err):
		le.markLost(errors.New("deleted"))
		return nil, le.why
	case apierrors.IsForbidden(err):
		// Not loss by itself: an API server that has just restarted
		// answers 403 until its RBAC cache is filled. A Role that is gone
		// for good stops the job at the fence.
		return nil, fmt.Errorf("renew %s: RBAC forbids it (403); retrying until the fence: %w", le.l.what(), err)
	case apierrors.IsConflict(err):
		return nil, fmt.Errorf("renew %s: written by another meanwhile, will read it again: %w", le.l.what(), err)
	}
	return nil, Classify(fmt.Errorf("renew %s: %w", le.l.what(), err), le.l.what())
}

// watchLoss watches the object from rv on and marks the lease lost when
// it is deleted or carries a record we did not write. A watch that ends
// with an error (a version too old, a refused watch) is followed by a
// read that decides the same way, then a new watch.
func (le *Lease) watchLoss(ctx context.Context, rv string) {
	for ctx.Err() == nil {
		start := time.Now()
		var failed bool
		var err error
		rv, err = le.l.watchOnce(ctx, rv, func(ev watch.Event) bool {
			switch ev.Type {
			case watch.Deleted:
				le.markLost(errors.New("deleted"))
				return false
			case watch.Added, watch.Modified:
				if o, ok := ev.Object.(*coordv1.Lease); ok && !le.ours(o.Spec) {
					le.notOurs(o)
					return false
				}
			case watch.Error:
				failed = true
				return false
			}
			return true
		})
		if le.lostErr() != nil || ctx.Err() != nil {
			return
		}
		if failed || err != nil {
			if v, ok := le.check(ctx); ok {
				rv = v
			}
		}
		if time.Since(start) < time.Second {
			ctxsleep.Sleep(ctx, time.Second)
		}
	}
}

// check reads the object: deleted or not ours is loss; it returns the
// version read, or false when the read failed (the renewals decide then).
func (le *Lease) check(ctx context.Context) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, le.l.cfg.RequestTimeout)
	defer cancel()
	cur, err := le.l.leases().Get(ctx, le.l.cfg.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		le.markLost(errors.New("deleted"))
		return "", false
	case err != nil:
		return "", false
	case !le.ours(cur.Spec):
		le.notOurs(cur)
		return "", false
	}
	return cur.ResourceVersion, true
}

// Finish stops renewal for good and the watch, then releases the lease
// the way client-go's ReleaseOnCancel does, only while the object is
// still ours. A release that fails is not an error (the lease expires by
// itself within its duration) unless the fence passed before the job was
// settled: then only a release that proved the object still ours lets
// the job's result stand; otherwise the error matches lease.ErrLost.
func (le *Lease) Finish(ctx context.Context, res lease.Result) error {
	le.mu.Lock()
	le.closed = true
	le.mu.Unlock()
	le.stop()
	le.wg.Wait()
	released := false
	if le.lostErr() == nil {
		released = le.release(ctx) == nil
	} else {
		le.mu.Lock()
		yield := le.yield
		le.mu.Unlock()
		if yield != nil {
			le.yieldTo(ctx, yield)
		}
	}
	if res.PastFence && !res.Lost && !released {
		return fmt.Errorf("%s: the fencing deadline passed before the job was settled and the Lease could not be shown ours; not reporting success: %w", le.l.what(), lease.ErrLost)
	}
	return nil
}

// yieldTo releases a Lease that a coordinated leader election's strategy
// write took from us, once the job is stopped: the ReleaseOnCancel record
// with the strategy and preferredHolder kept, on the object as that write
// left it (its resourceVersion the precondition: any later write wins).
// A failure is left alone: the Lease then expires by itself.
func (le *Lease) yieldTo(ctx context.Context, taken *coordv1.Lease) {
	ctx, cancel := context.WithTimeout(ctx, le.l.cfg.RequestTimeout)
	defer cancel()
	want := taken.DeepCopy()
	spec := releaseSpec(want.Spec, le.l.cfg.now())
	spec.Strategy, spec.PreferredHolder = want.Spec.Strategy, want.Spec.PreferredHolder
	want.Spec = spec
	if _, err := le.l.leases().Update(ctx, want, metav1.UpdateOptions{}); err != nil {
		le.l.cfg.Logger.Debug("the Lease taken by coordinated leader election was not released; it expires by itself", "lease", le.l.what(), "err", err)
	}
}

// release writes the ReleaseOnCancel record over the last object we know.
func (le *Lease) release(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, le.l.cfg.RequestTimeout)
	defer cancel()
	le.mu.Lock()
	want := le.obj.DeepCopy()
	le.mu.Unlock()
	want.Spec = releaseSpec(want.Spec, le.l.cfg.now())
	leases := le.l.leases()
	_, err := leases.Update(ctx, want, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		cur, gerr := leases.Get(ctx, le.l.cfg.Name, metav1.GetOptions{})
		if gerr != nil {
			return gerr
		}
		if !le.ours(cur.Spec) {
			return fmt.Errorf("%s: no longer ours (holder %s), not released", le.l.what(), holderName(cur.Spec))
		}
		spec := want.Spec
		want = cur.DeepCopy()
		want.Spec = spec
		_, err = leases.Update(ctx, want, metav1.UpdateOptions{})
	}
	return err
}
