package supervisor

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/oklog/run"

	"github.com/leasewrap/leasewrap/inherit"
	"github.com/leasewrap/leasewrap/internal/ctxsleep"
	"github.com/leasewrap/leasewrap/internal/fault"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/renew"
)

// SplayOffset is Config.Splay's wait: an offset in [0, d) hashed from host, kind and key.
func SplayOffset(host, kind, key string, d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(host))
	h.Write([]byte{0})
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(key))
	return time.Duration(h.Sum64() % uint64(d))
}

// splay waits the run's splay offset; a terminating signal aborts the run.
func (r *runner) splay(ctx context.Context) (time.Duration, error) {
	if r.cfg.Splay <= 0 {
		return 0, nil
	}
	host, _ := os.Hostname()
	if r.cfg.SplayHost != "" {
		host = r.cfg.SplayHost
	}
	l := r.main.locker
	d := SplayOffset(host, l.Kind(), l.Key(), r.cfg.Splay)
	r.cfg.Logger.Info("splaying the start", "kind", l.Kind(), "key", l.Key(), "delay", d.Round(time.Millisecond), "splay", r.cfg.Splay)
	r.emit(Event{Type: EventSplay, Latency: d})
	start := time.Now()
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return time.Since(start), nil
		case <-ctx.Done():
			return time.Since(start), ctx.Err()
		case s := <-r.sigs:
			if isAbortSignal(s) {
				return time.Since(start), &abortError{sig: s.(syscall.Signal)}
			}
			r.cfg.Logger.Debug("signal while splaying; no child to pass it to, dropped", "signal", s)
		}
	}
}

// abortError reports a signal that stopped leasewrap before the child started.
type abortError struct{ sig syscall.Signal }

func (e *abortError) Error() string {
	return fmt.Sprintf("supervisor: %v while acquiring; nothing was started", e.sig)
}

// isAbortSignal tells the signals that stop an acquisition.
func isAbortSignal(s os.Signal) bool {
	switch s {
	case syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT:
		return true
	}
	return false
}

// Back-off between attempts while waiting: jittered, doubling, capped.
const (
	backoffMin = 2 * time.Millisecond
	backoffMax = 250 * time.Millisecond
)

// waitReportEvery is how often a waiter says again whom it waits for.
const waitReportEvery = time.Minute

// acquire takes j's lease and starts j's command: attempt loop and signal watcher.
func (r *runner) acquire(ctx context.Context, j *job) (*acquired, error) {
	var (
		got     *acquired
		started atomic.Bool // the attempt returned with the job started
		caught  os.Signal   // the abort signal the watcher returned with
		late    []os.Signal // signals the watcher took once the job had started
	)
	var g run.Group
	actor(&g, ctx, func(ctx context.Context) error {
		a, err := r.attemptLoop(ctx, j)
		got = a
		started.Store(a != nil)
		return err
	})
	actor(&g, ctx, func(ctx context.Context) error {
		for {
			if r.beforeWatch != nil {
				r.beforeWatch()
			}
			select {
			case s := <-r.sigs:
				if started.Load() {
					// The job runs: the signal is its own, passed on below.
					late = append(late, s)
					continue
				}
				if isAbortSignal(s) {
					caught = s
					return &abortError{sig: s.(syscall.Signal)}
				}
				r.cfg.Logger.Debug("signal while acquiring; no child to pass it to, dropped", "signal", s)
			case <-ctx.Done():
				return nil
			}
		}
	})
	err := g.Run() // returns once both actors have: got, caught and late are settled
	if got != nil {
		// A signal that raced the start is the job's.
		for _, s := range append([]os.Signal{caught}, late...) {
			if s == nil {
				continue
			}
			got.child.signal(s)
			if sig, ok := s.(syscall.Signal); ok && isAbortSignal(sig) {
				got.forwarded = sig
			}
		}
		if errors.As(err, new(*abortError)) {
			err = nil // the signal went to the job
		}
		return got, err
	}
	if err == nil {
		err = errors.New("supervisor: acquisition ended without a lease")
	}
	return got, err
}

// attemptLoop tries to take the lease until it succeeds, fails for good,
// the wait runs out or ctx ends. A kind with a queue waits in it; any
// other kind is retried here, woken by its Notifier if it has one.
func (r *runner) attemptLoop(ctx context.Context, j *job) (*acquired, error) {
	wait := r.cfg.Wait
	if q, ok := j.locker.(lease.Queuer); ok && wait > 0 {
		return r.queued(ctx, j, q)
	}
	log := r.cfg.Logger.With("kind", j.locker.Kind(), "key", j.locker.Key())
	began := time.Now()
	deadline := began.Add(wait)
	var w lease.Wake
	if n, ok := j.locker.(lease.Notifier); ok && wait > 0 {
		var err error
		if w, err = n.Notify(ctx); err != nil {
			return nil, err
		}
		defer w.Close()
	}
	granter, _ := w.(lease.Granter)
	backoff := backoffMin
	var reported time.Time // when the waiter last said whom it waits for
	var held error         // the last attempt's contention
	woke := true           // an attempt is due
	for attempt := 0; ; {
		if woke || granter == nil || !granter.Grants() {
			attempt++
			a, err := r.attempt(ctx, j)
			if err == nil {
				return a, nil
			}
			if !errors.Is(err, lease.ErrHeld) {
				return nil, err
			}
			held = err
			r.emit(Event{Type: EventWaiting, Holder: heldBy(err), Err: err})
		}
		if wait == 0 {
			return nil, held
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("%w (%v): %w", ErrWaitTimeout, wait, held)
		}
		switch {
		case reported.IsZero():
			if err := r.readyJob(j); err != nil {
				return nil, err
			}
			log.Info("lease held; waiting", append(heldAttrs(held), "wait", wait, "reason", held.Error())...)
			reported = time.Now()
		case time.Since(reported) >= r.waitReport:
			log.Info("lease still held; still waiting", append(heldAttrs(held), "waited", time.Since(began).Round(time.Second), "left", left.Round(time.Second), "reason", held.Error())...)
			reported = time.Now()
		}
		sleep := min(backoff/2+time.Duration(rand.Int64N(int64(backoff))), left, r.waitReport)
		if granter != nil && granter.Grants() {
			// The kernel grants the lease: wake only to report or give up.
			sleep = min(left, r.waitReport-time.Since(reported))
			log.Debug("lease still held; waiting for the grant", "max_sleep", sleep)
		} else {
			log.Debug("lease still held; retrying", "attempt", attempt, "max_sleep", sleep, "reason", held.Error())
		}
		var err error
		if w != nil {
			woke, err = w.Wait(ctx, held, sleep)
		} else {
			err = ctxsleep.Sleep(ctx, sleep)
		}
		if err != nil {
			return nil, err
		}
		if woke {
			backoff = backoffMin // a real change: the next one may be soon too
		} else {
			backoff = min(backoff*2, backoffMax)
		}
	}
}

// heldBy is the other holder a contention error names, if any.
func heldBy(err error) string {
	var held *lease.HeldError
	if errors.As(err, &held) {
		return held.Holder
	}
	return ""
}

// heldAttrs are the log attributes of whom a waiter waits for.
func heldAttrs(err error) []any {
	var held *lease.HeldError
	if !errors.As(err, &held) {
		return nil
	}
	if held.Holder == "" {
		return held.HolderAttrs()
	}
	return append([]any{"holder", held.Holder}, held.HolderAttrs()...)
}

// queued waits in the kind's own queue until Wait runs out.
func (r *runner) queued(ctx context.Context, j *job, q lease.Queuer) (*acquired, error) {
	qctx, cancel := context.WithTimeout(ctx, r.cfg.Wait)
	defer cancel()
	if err := r.readyJob(j); err != nil {
		return nil, err
	}
	// Its lease dies with leasewrap: start the guard now, off the hand-over's path.
	if j.guard == nil {
		if t, err := r.startGuard(); err == nil {
			j.guard = t
		}
	}
	defer func() { // unused: the lease needed none, or nothing started
		if j.guard != nil {
			j.guard.done()
			j.guard = nil
		}
	}()
	for {
		ls, err := q.AcquireWait(qctx)
		if err != nil {
			// A request that timed out on its own is the kind's failure, not a wait run out.
			if ctx.Err() == nil && (errors.Is(err, lease.ErrHeld) || errors.Is(qctx.Err(), context.DeadlineExceeded)) {
				return nil, fmt.Errorf("%w (%v): %w", ErrWaitTimeout, r.cfg.Wait, err)
			}
			return nil, err
		}
		// The fence counts from the kind's last confirmation, else a renewal now.
		at := time.Now()
		if c, ok := ls.(lease.Confirmed); ok && ls.TTL() > 0 && !c.ConfirmedAt().IsZero() && r.cfg.checkStartMargin(ls, c.ConfirmedAt()) == nil {
			at = c.ConfirmedAt()
			r.cfg.Logger.Debug("starting under the lease's last confirmation; no renewal first", "kind", j.locker.Kind(), "key", j.locker.Key(), "confirmed_ago", time.Since(at))
		} else if ls.TTL() > 0 {
			r.cfg.Logger.Debug("renewing the lease before the command starts", "kind", j.locker.Kind(), "key", j.locker.Key())
			if err := ls.Renew(ctx); err != nil {
				r.undo(j, ls, err)
				err = fmt.Errorf("%w: lease granted after the wait but not renewable (%v); the command did not run", lease.ErrHeld, err)
				if qctx.Err() == nil && ctx.Err() == nil {
					r.cfg.Logger.Info("lease lost before the command started; waiting again", "kind", j.locker.Kind(), "key", j.locker.Key(), "reason", err.Error())
					continue
				}
				return nil, err
			}
		}
		a, err := r.startUnder(ctx, j, ls, at)
		if err != nil && errors.Is(err, lease.ErrHeld) && qctx.Err() == nil && ctx.Err() == nil {
			// startUnder settled the lease as never run (a late start).
			r.cfg.Logger.Info("lease granted too late to start the command; waiting again", "kind", j.locker.Kind(), "key", j.locker.Key(), "reason", err.Error())
			continue
		}
		return a, err
	}
}

// readyJob makes, before a wait, what j's start needs and no lease decides
// (its cgroup, startLimits), so that the hand-over does not wait for it.
func (r *runner) readyJob(j *job) error {
	if j.form != nil {
		j.form.ready()
	}
	return startLimits()
}

// attempt makes one acquisition attempt and, on success, starts the child.
func (r *runner) attempt(ctx context.Context, j *job) (*acquired, error) {
	an, anchored := j.locker.(lease.Anchor)
	if !anchored {
		at := time.Now()
		ls, err := j.locker.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		return r.startUnder(ctx, j, ls, at)
	}

	// An anchored kind records the job's pid: start it behind the exec gate first.
	if err := an.Probe(ctx); err != nil {
		return nil, err
	}
	ch, err := r.startStopped(j, inherit.Handover{Kind: j.locker.Kind(), Key: j.locker.Key(), Holder: an.Holder()})
	if err != nil {
		return nil, err
	}
	fault.Point("supervisor.after-start-before-anchor")
	at := time.Now()
	ls, err := an.AcquireAnchored(ctx, ch.pid)
	if err != nil {
		if sig := ch.kill(); sig != 0 && errors.Is(err, lease.ErrHeld) {
			// A signal ended the waiting command: the run ends as the command would.
			return nil, &abortError{sig: sig}
		}
		return nil, err
	}
	fault.Point("supervisor.after-anchor-before-release")
	if _, hasFile := ls.(lease.FileHolder); hasFile || len(ls.Env()) > 0 || ls.Holder() != an.Holder() {
		// Anchored kinds hand over nothing the gated child lacks.
		ch.kill()
		r.undo(j, ls, nil)
		return nil, fmt.Errorf("supervisor: anchored kind %q returned a descriptor, an environment or another holder", j.locker.Kind())
	}
	if at, err = r.letGoUnder(ctx, j, ls, ch, at); err != nil {
		return nil, err
	}
	ch.pidOnly = ls.TTL() == 0
	return &acquired{lease: ls, child: ch, at: at, anchored: true}, nil
}

// startUnder starts j's command under ls, taken by an attempt begun at at.
func (r *runner) startUnder(ctx context.Context, j *job, ls lease.Lease, at time.Time) (*acquired, error) {
	fault.Point("supervisor.after-acquire-before-start")
	at, err := r.readyToStart(ctx, j, ls, at)
	if err != nil {
		r.undo(j, ls, err)
		return nil, err
	}
	h := inherit.Handover{Kind: j.locker.Kind(), Key: j.locker.Key(), Holder: ls.Holder(), Env: ls.Env()}
	if f, ok := ls.(lease.FileHolder); ok {
		h.File = f.File()
	}
	cmd, err := r.prepare(j, h)
	if err != nil {
		r.undo(j, ls, err)
		return nil, err
	}
	var ch *child
	if lease.DiesWithLeasewrap(ls, false) {
		t := j.guard // started while the lease was awaited (queued), or nil
		j.guard = nil
		if t == nil {
			t, err = r.startGuard()
		}
		if err == nil {
			ch, err = startGuarded(cmd, t, j.form)
		}
	} else if ch, err = startPlain(cmd); err == nil && j.form != nil {
		j.form.started(ch)
	}
	if err != nil {
		r.undo(j, ls, err)
		return nil, err
	}
	return &acquired{lease: ls, child: ch, at: at}, nil
}

// readyToStart makes the checks and runs the on-start hook due before a
// start under ls; it returns the instant the fence counts from. On an
// error the command must not start.
func (r *runner) readyToStart(ctx context.Context, j *job, ls lease.Lease, at time.Time) (time.Time, error) {
	if err := r.cfg.ValidateTiming(ls.TTL()); err != nil {
		return at, err
	}
	if err := r.cfg.checkStartMargin(ls, at); err != nil {
		return at, err
	}
	at, err := r.onStart(ctx, j, ls, at)
	if err != nil {
		return at, err
	}
	// Observers (/readyz) learn the lease is held before the command starts.
	var fence time.Time
	if k, err := renew.New(r.cfg.renewConfig(ls.TTL(), ls.Renew), at); err == nil {
		fence = k.Fence()
	}
	r.emit(Event{Type: EventAcquired, Holder: ls.Holder(), Fence: fence})
	return at, nil
}

// helperExe is the executable of the helper roles.
func (r *runner) helperExe(role string) (string, error) {
	if r.cfg.HelperExe != "" {
		return r.cfg.HelperExe, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("supervisor: find leasewrap's own executable for the %s: %w", role, err)
	}
	return exe, nil
}

// undo settles a lease that was taken but whose child never ran.
func (r *runner) undo(j *job, ls lease.Lease, cause error) {
	if err := r.finish(ls, lease.Result{ExitCode: -1, Lost: true}, time.Now().Add(r.cfg.FinishTimeout)); err != nil {
		r.cfg.Logger.Error("could not release a lease whose command never started", "key", j.locker.Key(), "err", err, "cause", cause)
	}
}
