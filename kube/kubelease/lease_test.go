package kubelease

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/lease"
)

// store is an in-memory Leases API with the API server's optimistic
// concurrency (an Update whose resourceVersion is not the stored one is a
// Conflict), for the protocol's unit tests; the command's tests run the
// same protocol against a real kube-apiserver.
type store struct {
	mu       sync.Mutex
	rv       int
	objs     map[string]*coordv1.Lease
	watches  []*watch.RaceFreeFakeWatcher
	failNext error // returned (once) by the next Update instead of storing
}

var gr = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

func newStore() *store { return &store{objs: map[string]*coordv1.Lease{}} }

func (s *store) Leases(string) LeaseInterface { return s }

func (s *store) Get(_ context.Context, name string, _ metav1.GetOptions) (*coordv1.Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[name]
	if !ok {
		return nil, apierrors.NewNotFound(gr, name)
	}
	return o.DeepCopy(), nil
}

func (s *store) Create(_ context.Context, l *coordv1.Lease, _ metav1.CreateOptions) (*coordv1.Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objs[l.Name]; ok {
		return nil, apierrors.NewAlreadyExists(gr, l.Name)
	}
	return s.put(l, watch.Added), nil
}

func (s *store) Update(_ context.Context, l *coordv1.Lease, _ metav1.UpdateOptions) (*coordv1.Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failNext; err != nil {
		s.failNext = nil
		return nil, err
	}
	o, ok := s.objs[l.Name]
	if !ok {
		return nil, apierrors.NewNotFound(gr, l.Name)
	}
	if o.ResourceVersion != l.ResourceVersion {
		return nil, apierrors.NewConflict(gr, l.Name, errors.New("the object has been modified"))
	}
	return s.put(l, watch.Modified), nil
}

func (s *store) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := watch.NewRaceFreeFake()
	s.watches = append(s.watches, w)
	return w, nil
}

// put stores l under a new resourceVersion and tells the watchers.
func (s *store) put(l *coordv1.Lease, ev watch.EventType) *coordv1.Lease {
	s.rv++
	o := l.DeepCopy()
	o.ResourceVersion = strconv.Itoa(s.rv)
	s.objs[o.Name] = o
	for _, w := range s.watches {
		if !w.IsStopped() {
			w.Action(ev, o.DeepCopy())
		}
	}
	return o.DeepCopy()
}

// edit changes the stored object as another client would.
func (s *store) edit(name string, f func(*coordv1.Lease)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objs[name].DeepCopy()
	f(o)
	s.put(o, watch.Modified)
}

func (s *store) remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objs[name]
	delete(s.objs, name)
	for _, w := range s.watches {
		if !w.IsStopped() {
			w.Delete(o)
		}
	}
}

// watching waits until n watches were opened (the real API server replays
// events from the watch's resourceVersion; this store does not).
func (s *store) watching(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(testutil.Scale(5 * time.Second))
	for {
		s.mu.Lock()
		have := len(s.watches)
		s.mu.Unlock()
		if have >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %d watches, have %d", n, have)
		}
		time.Sleep(time.Millisecond)
	}
}

func (s *store) spec(name string) coordv1.LeaseSpec {
	o, _ := s.Get(context.Background(), name, metav1.GetOptions{})
	return o.Spec
}

func locker(t *testing.T, s *store, id string) *Locker {
	t.Helper()
	l, err := New(Config{Client: s, Namespace: "ns", Name: "x", Identity: id, Skew: DefaultSkew})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func acquire(t *testing.T, l *Locker) *Lease {
	t.Helper()
	le, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { le.Finish(context.Background(), lease.Result{}) })
	return le.(*Lease)
}

func waitDone(t *testing.T, le *Lease) {
	t.Helper()
	select {
	case <-le.Done():
	case <-time.After(testutil.Scale(5 * time.Second)):
		t.Fatal("Done not closed within 5 s")
	}
}

func TestAcquireCreateTakeoverRelease(t *testing.T) {
	s := newStore()
	a := acquire(t, locker(t, s, "a"))
	if a.Fence() != 0 || deref(s.spec("x").HolderIdentity) != "a" {
		t.Fatalf("create: fence %d, holder %q", a.Fence(), deref(s.spec("x").HolderIdentity))
	}
	if _, err := locker(t, s, "b").Acquire(context.Background()); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("while a holds it: want held, have %v", err)
	}
	if _, err := locker(t, s, "a").Acquire(context.Background()); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("the same identity while live: want held, have %v", err)
	}
	if err := a.Finish(context.Background(), lease.Result{}); err != nil {
		t.Fatal(err)
	}
	if sp := s.spec("x"); deref(sp.HolderIdentity) != "" || deref(sp.LeaseDurationSeconds) != 1 || deref(sp.LeaseTransitions) != 0 {
		t.Fatalf("released record: %+v", sp)
	}
	b := acquire(t, locker(t, s, "b"))
	if b.Fence() != 1 {
		t.Fatalf("takeover after release: want fence 1, have %d", b.Fence())
	}
}

func TestAcquireLosesRaces(t *testing.T) {
	s := newStore()
	acquire(t, locker(t, s, "a"))
	s.edit("x", func(o *coordv1.Lease) { o.Spec = releaseSpec(o.Spec, time.Now()) })
	s.failNext = apierrors.NewConflict(gr, "x", errors.New("modified"))
	_, err := locker(t, s, "b").Acquire(context.Background())
	var he *lease.HeldError
	if !errors.As(err, &he) {
		t.Fatalf("an Update conflict on takeover: want held (lost race), have %v", err)
	}
}

func TestRenew(t *testing.T) {
	ctx := context.Background()
	t.Run("keeps acquisition, moves renewTime", func(t *testing.T) {
		s := newStore()
		a := acquire(t, locker(t, s, "a"))
		before := s.spec("x")
		time.Sleep(2 * time.Millisecond)
		if err := a.Renew(ctx); err != nil {
			t.Fatal(err)
		}
		after := s.spec("x")
		if !after.RenewTime.After(before.RenewTime.Time) || !after.AcquireTime.Equal(before.AcquireTime) || deref(after.LeaseTransitions) != 0 {
			t.Fatalf("renewal: before %+v after %+v", before, after)
		}
	})
	t.Run("a label is not loss", func(t *testing.T) {
		s := newStore()
		a := acquire(t, locker(t, s, "a"))
		s.watching(t, 1)
		s.edit("x", func(o *coordv1.Lease) { o.Labels = map[string]string{"team": "ops"} })
		if err := a.Renew(ctx); err != nil {
			t.Fatalf("renew after a label: %v", err)
		}
		o, _ := s.Get(ctx, "x", metav1.GetOptions{})
		if o.Labels["team"] != "ops" {
			t.Fatal("the renewal dropped the label")
		}
		select {
		case <-a.Done():
			t.Fatal("a label closed Done")
		case <-time.After(50 * time.Millisecond):
		}
	})
	t.Run("another holder is loss", func(t *testing.T) {
		s := newStore()
		a := acquire(t, locker(t, s, "a"))
		s.watching(t, 1)
		s.edit("x", func(o *coordv1.Lease) { o.Spec = takeoverSpec(o.Spec, "b", 15*time.Second, time.Now()) })
		waitDone(t, a) // pushed by the watch
		if err := a.Renew(ctx); !errors.Is(err, lease.ErrLost) {
			t.Fatalf("renew after a takeover: want lost, have %v", err)
		}
		if err := a.Finish(ctx, lease.Result{Lost: true}); err != nil {
			t.Fatal(err)
		}
		if h := deref(s.spec("x").HolderIdentity); h != "b" {
			t.Fatalf("a lost lease was released over the new holder: holder %q", h)
		}
	})
	t.Run("deleted is loss", func(t *testing.T) {
		s := newStore()
		a := acquire(t, locker(t, s, "a"))
		s.watching(t, 1)
		s.remove("x")
		waitDone(t, a)
		if err := a.Renew(ctx); !errors.Is(err, lease.ErrLost) {
			t.Fatalf("want lost, have %v", err)
		}
	})
	t.Run("403 is retried, not loss", func(t *testing.T) {
		s := newStore()
		a := acquire(t, locker(t, s, "a"))
		s.failNext = apierrors.NewForbidden(gr, "x", errors.New("no"))
		if err := a.Renew(ctx); err == nil || errors.Is(err, lease.ErrLost) {
			t.Fatalf("a 403: want a transient error, have %v", err)
		}
		if err := a.Renew(ctx); err != nil {
			t.Fatalf("the next renewal: %v", err)
		}
	})
	t.Run("none after Finish", func(t *testing.T) {
		s := newStore()
		a := acquire(t, locker(t, s, "a"))
		a.Finish(ctx, lease.Result{})
		if err := a.Renew(ctx); !errors.Is(err, lease.ErrLost) {
			t.Fatalf("renew after Finish: want lost, have %v", err)
		}
	})
}

func TestFinishPastFence(t *testing.T) {
	ctx := context.Background()
	s := newStore()
	a := acquire(t, locker(t, s, "a"))
	if err := a.Finish(ctx, lease.Result{PastFence: true}); err != nil {
		t.Fatalf("past the fence but still ours (the release proved it): want nil, have %v", err)
	}
	b := acquire(t, locker(t, s, "b"))
	s.failNext = apierrors.NewServiceUnavailable("down")
	if err := b.Finish(ctx, lease.Result{PastFence: true}); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("past the fence, release failed: want lost, have %v", err)
	}
}

func TestWaitTakesOverOnRelease(t *testing.T) {
	s := newStore()
	a := acquire(t, locker(t, s, "a"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make(chan error, 1)
	b := locker(t, s, "b")
	go func() { // ends with AcquireWait, bounded by ctx
		le, err := b.AcquireWait(ctx)
		if err == nil {
			le.Finish(context.Background(), lease.Result{})
		}
		got <- err
	}()
	s.watching(t, 2) // a's loss watch, b's wake-up watch
	a.Finish(context.Background(), lease.Result{})
	if err := <-got; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	acquire(t, locker(t, s, "c"))
	if _, err := locker(t, s, "d").AcquireWait(ctx2); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("a wait that runs out: want held, have %v", err)
	}
}
