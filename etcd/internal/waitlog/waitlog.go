// Package waitlog is how the etcd kinds' waiters explain themselves: whom
// they wait for when they start waiting, again at least every Every (one
// minute by default) with how long they have waited, and each attempt at
// debug level.
package waitlog

import (
	"log/slog"
	"time"
)

// DefaultEvery is how often a waiter says it still waits.
const DefaultEvery = time.Minute

// Log is one waiter's log. It is used by one goroutine.
type Log struct {
	logger  *slog.Logger
	every   time.Duration
	attrs   []any
	started time.Time
	next    time.Time
	said    bool
	tries   int
}

// New starts a waiter's log for kind and key (its first report is due at
// once). A nil logger discards; every <= 0 is DefaultEvery.
func New(logger *slog.Logger, every time.Duration, kind, key string) *Log {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if every <= 0 {
		every = DefaultEvery
	}
	now := time.Now()
	return &Log{logger: logger, every: every, attrs: []any{"kind", kind, "key", key}, started: now, next: now}
}

// Attempt logs one attempt at debug level with what it found.
func (w *Log) Attempt(what string, attrs ...any) {
	w.tries++
	w.logger.Debug(what, append(append(append([]any{}, w.attrs...), "attempt", w.tries), attrs...)...)
}

// Due reports whether a report is due (the first one, or Every after the
// last).
func (w *Log) Due() bool { return !w.said || !time.Now().Before(w.next) }

// Next is when the next report is due: a waiter's blocking wait ends then
// at the latest, so that it can report.
func (w *Log) Next() time.Time { return w.next }

// Report logs, at info level, that the waiter waits for holder (attrs say
// more): "waiting" the first time, "still waiting" with how long after.
func (w *Log) Report(holder string, attrs ...any) {
	msg := "lease held by another; waiting"
	base := append(append([]any{}, w.attrs...), "holder", holder)
	if w.said {
		msg = "lease still held by another; still waiting"
		base = append(base, "waited", time.Since(w.started).Round(time.Second))
	}
	w.logger.Info(msg, append(base, attrs...)...)
	w.said = true
	w.next = time.Now().Add(w.every)
}
