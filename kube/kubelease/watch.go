package kubelease

import (
	"context"
	"sync"
	"time"

	"github.com/leasewrap/leasewrap/internal/ctxsleep"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
)

// watchTimeout is how long the server keeps one watch open before it ends
// it; the watcher then starts another from the last resourceVersion.
const watchTimeout = 5 * time.Minute

// watchOnce watches the object from resourceVersion rv until the watch
// ends or ctx does, calling event for each event (an Error event carries
// a *metav1.Status). It returns the last resourceVersion seen.
func (l *Locker) watchOnce(ctx context.Context, rv string, event func(watch.Event) bool) (string, error) {
	w, err := l.leases().Watch(ctx, metav1.ListOptions{
		FieldSelector:       fields.OneTermEqualSelector("metadata.name", l.cfg.Name).String(),
		ResourceVersion:     rv,
		TimeoutSeconds:      ptr(int64(watchTimeout / time.Second)),
		AllowWatchBookmarks: true,
	})
	if err != nil {
		if apierrors.IsForbidden(err) {
			l.noWatch.Do(func() {
				l.cfg.Logger.Warn("RBAC forbids watch on leases: changes to the Lease are seen by reading it every second while held, every 2s while waiting; grant watch (docs/KUBERNETES.md, RBAC)",
					"lease", l.what(), "err", err)
			})
		}
		return rv, err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return rv, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv, nil
			}
			if o, ok := ev.Object.(*coordv1.Lease); ok && o.ResourceVersion != "" {
				rv = o.ResourceVersion
			}
			if !event(ev) {
				return rv, nil
			}
		}
	}
}

// waker wakes a waiter when the object changes: a watch from the
// resourceVersion of the last read, started on the first held reading
// and restarted (from the last version it saw) after it ends.
type waker struct {
	l       *Locker
	ch      chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	running bool
}

func newWaker(l *Locker) *waker {
	ctx, cancel := context.WithCancel(context.Background())
	return &waker{l: l, ch: make(chan struct{}, 1), ctx: ctx, cancel: cancel}
}

func (w *waker) kick() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// drain forgets a change reported before the next read (the read sees it).
func (w *waker) drain() {
	select {
	case <-w.ch:
	default:
	}
}

// watchFrom starts the watch from rv unless one runs.
func (w *waker) watchFrom(rv string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running || w.ctx.Err() != nil {
		return
	}
	w.running = true
	w.wg.Add(1)
	go func() { // ended by close, which waits for it
		defer w.wg.Done()
		start := time.Now()
		_, err := w.l.watchOnce(w.ctx, rv, func(watch.Event) bool { w.kick(); return true })
		if err != nil || time.Since(start) < time.Second {
			ctxsleep.Sleep(w.ctx, time.Second) // a watch refused or cut at once: do not spin
		}
		w.mu.Lock()
		w.running = false
		w.mu.Unlock()
		w.kick() // the watch ended: read again (and restart it from there)
	}()
}

// wait blocks until a change, d passed, or ctx ended (its error).
func (w *waker) wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-w.ch:
	case <-t.C:
	}
	return nil
}

func (w *waker) close() {
	w.cancel()
	w.wg.Wait()
}
