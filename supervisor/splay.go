package supervisor

import (
	"context"
	"hash/fnv"
	"os"
	"syscall"
	"time"
)

// SplayOffset is the wait Config.Splay asks for before the first attempt:
// a fixed offset in [0, d) derived from host, kind and key (FNV-1a), the
// same on every run of that host and key and spread evenly across a fleet
// of hosts. 0 when d is 0.
//
// Stable rather than random per run: a hash spreads a hundred hosts over
// [0, d) as evenly as random draws do, but each host keeps its own steady
// schedule (an hourly job with --splay 50m runs an hour apart, never
// eleven minutes apart after one early and one late draw), and a run's
// delay can be told in advance and reproduced when reading its logs. A
// pod's host name is its own name, new for every run of a CronJob: there
// the offset changes from run to run.
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

// splay waits the run's splay offset before anything is acquired. A
// terminating signal meanwhile aborts the run as during --wait (nothing
// was started or taken); the other forwarded signals are dropped.
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
