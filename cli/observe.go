package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/kong"
	"github.com/oklog/run"

	"github.com/leasewrap/leasewrap/internal/metrics"
	"github.com/leasewrap/leasewrap/internal/safefile"
	"github.com/leasewrap/leasewrap/supervisor"
)

// ObserveFlags are the run verbs' metrics and health flags (see
// docs/METRICS.md). Neither costs anything when it is not given.
type ObserveFlags struct {
	MetricsFile string `name:"metrics-file" placeholder:"PATH" help:"After the run (also a conflict or an error), write its metrics in the Prometheus text format to PATH, atomically, for node_exporter's textfile collector (name it *.prom); leasewrap_runs_total is carried over from the previous file."`
	Listen      string `placeholder:"ADDR" help:"Serve /metrics, /healthz and /readyz over HTTP while the run lasts. A bare port is loopback (9100 = 127.0.0.1:9100); other interfaces only when named (:9100, 0.0.0.0:9100)."`

	obs observation // what the run did, filled in as it goes
}

// errMetricsFile marks a refused --metrics-file (which then cannot be
// written either).
var errMetricsFile = errors.New("metrics file refused")

// maxMetricsFile bounds the previous textfile read back for its counters.
const maxMetricsFile = 1 << 20

// check refuses, before anything runs, a metrics file leasewrap could not
// update afterwards (no such directory, something else at the name, a
// file it did not write) and a --listen address that is not one.
func (f *ObserveFlags) check() error {
	if f.MetricsFile != "" {
		if err := checkMetricsFile(f.MetricsFile); err != nil {
			return fmt.Errorf("%w: %w: %v", ErrUsage, errMetricsFile, err)
		}
	}
	if f.Listen != "" {
		if _, err := metrics.ListenAddr(f.Listen); err != nil {
			return fmt.Errorf("%w: --listen %v", ErrUsage, err)
		}
	}
	return nil
}

func checkMetricsFile(path string) error {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("--metrics-file %s: directory %s does not exist; create it first", path, dir)
	}
	prev, err := readMetricsFile(path)
	if err != nil {
		return err
	}
	_, err = metrics.Textfile(prev, metrics.Run{Outcome: metrics.OutcomeRan})
	return metricsFileError(path, err)
}

// readMetricsFile is the previous textfile (nil if there is none), read
// under safefile's rules: a symlink, FIFO or hard link at path is refused.
func readMetricsFile(path string) ([]byte, error) {
	b, err := safefile.ReadBounded(path, maxMetricsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--metrics-file %s: %w; it is left as it is: remove it, or name another file", path, err)
	}
	return b, nil
}

func metricsFileError(path string, err error) error {
	var ce *metrics.CorruptError
	if errors.As(err, &ce) {
		return fmt.Errorf("--metrics-file %s is not a metrics file leasewrap wrote (%v); it is left as it is, not updated: move it away or remove it (the counters then start again from 0)", path, err)
	}
	if err != nil {
		return fmt.Errorf("--metrics-file %s: %w", path, err)
	}
	return nil
}

// writeMetricsFile writes the textfile after run: the previous file's
// counters carried over, a temp file in the same directory, fsync,
// rename, fsync of the directory.
func writeMetricsFile(path string, r metrics.Run) error {
	prev, err := readMetricsFile(path)
	if err != nil {
		return err
	}
	b, err := metrics.Textfile(prev, r)
	if err != nil {
		return metricsFileError(path, err)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	// The temp name does not end in .prom: the collector never reads a
	// half-written file.
	f, tmp, err := safefile.CreateTemp(func(int) (string, error) {
		suffix, err := safefile.RandomHex(6)
		return filepath.Join(dir, "."+base+".tmp-"+suffix), err
	}, os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("--metrics-file %s: create a temp file in %s: %w", path, dir, err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path) // replaces a name, never writes through it
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("--metrics-file %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// observation is what one run did, as far as the metrics care.
type observation struct {
	mu       sync.Mutex
	kind     string
	key      string
	acquired time.Time          // wall and monotonic; zero until the lease is held
	result   *supervisor.Result // what the run came to; nil if it failed (an error)
	live     *metrics.Live
}

// observed is a run verb (it embeds RunFlags).
type observed interface{ observeFlags() *ObserveFlags }

func (f *ObserveFlags) observeFlags() *ObserveFlags { return f }

// setLease names the run's kind and key and returns its live state.
func (o *observation) setLease(kind, key string) *metrics.Live {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.kind, o.key = kind, key
	if o.live == nil {
		o.live = metrics.NewLive(kind, key)
	}
	return o.live
}

// run runs the supervisor, with the --listen server beside it as an actor
// of the same run.Group when asked for; the run's events feed its metrics.
func (f *ObserveFlags) run(ctx context.Context, cfg supervisor.Config) (supervisor.Result, error) {
	live := f.obs.setLease(cfg.Locker.Kind(), cfg.Locker.Key())
	if prev := cfg.OnEvent; prev != nil {
		cfg.OnEvent = func(ev supervisor.Event) { prev(ev); f.obs.onEvent(ev) }
	} else {
		cfg.OnEvent = f.obs.onEvent
	}
	res, err := f.serve(ctx, cfg, live)
	if err == nil {
		f.obs.mu.Lock()
		f.obs.result = &res
		f.obs.mu.Unlock()
	}
	return res, err
}

// serve is supervisor.Run, beside the --listen server if asked for.
func (f *ObserveFlags) serve(ctx context.Context, cfg supervisor.Config, live *metrics.Live) (supervisor.Result, error) {
	if f.Listen == "" {
		return supervisor.Run(ctx, cfg)
	}
	addr, err := metrics.ListenAddr(f.Listen)
	if err != nil {
		return supervisor.Result{}, fmt.Errorf("%w: --listen %v", ErrUsage, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return supervisor.Result{}, fmt.Errorf("--listen %s: %w (nothing ran)", f.Listen, err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger.Info("serving /metrics, /healthz and /readyz", "addr", ln.Addr().String())
	var g run.Group
	var res supervisor.Result
	{
		ctx, cancel := context.WithCancel(ctx)
		g.Add(func() error {
			var err error
			res, err = supervisor.Run(ctx, cfg)
			return err
		}, func(error) { cancel() })
	}
	{
		srv := &metrics.Server{Live: live}
		stop := make(chan struct{})
		var once sync.Once
		g.Add(func() error {
			// A failing endpoint never stops the job: it is logged and
			// the actor waits for the run to end.
			if err := srv.Serve(ln); err != nil {
				logger.Error("the --listen endpoint stopped; the run goes on without it", "addr", ln.Addr().String(), "err", err)
			}
			<-stop
			return nil
		}, func(error) {
			srv.Close()
			once.Do(func() { close(stop) })
		})
	}
	err = g.Run() // the supervisor's actor ends it: the server's ends only when interrupted
	return res, err
}

// onEvent feeds the run's metrics from the supervisor's events
// (supervisor.Config.OnEvent). It is called synchronously from the
// supervisor's goroutines and never blocks: a few assignments under
// mutexes that nothing holds for longer.
func (o *observation) onEvent(ev supervisor.Event) {
	o.mu.Lock()
	live := o.live
	if ev.Type == supervisor.EventAcquired && o.acquired.IsZero() {
		o.acquired = ev.Time
	}
	o.mu.Unlock()
	if live == nil {
		return
	}
	switch ev.Type {
	case supervisor.EventWaiting:
		live.Waiting(ev.Holder, ev.Time)
	case supervisor.EventAcquired:
		live.Acquired(ev.Fence)
	case supervisor.EventRenewed:
		live.Renewed(ev.Latency, ev.Err, ev.Fence)
	case supervisor.EventStarted:
		live.Started(ev.PID, ev.Time)
	case supervisor.EventLost:
		live.Lost()
	case supervisor.EventFinished:
		live.Released()
	}
}

// metricsOutcome is the runs_total outcome of a run: its Result's
// outcome, or error when the run failed (res nil: usage, a command that
// cannot run, I/O, a refused record, a lease that could not be settled).
func metricsOutcome(res *supervisor.Result) string {
	if res == nil {
		return metrics.OutcomeError
	}
	switch res.Outcome {
	case supervisor.Ran:
		return metrics.OutcomeRan
	case supervisor.Replayed:
		return metrics.OutcomeReplayed
	case supervisor.Conflict:
		return metrics.OutcomeConflict
	case supervisor.Lost:
		return metrics.OutcomeLost
	}
	return metrics.OutcomeError // aborted by a signal, a failed pre-step
}

// finishObserving writes the --metrics-file of the run verb kctx ran, if
// it asked for one: err is what it returned, code the exit status, start
// when it began. A failure is logged; the run's exit status stands.
func finishObserving(kctx *kong.Context, start time.Time, err error, code int, logger *slog.Logger) {
	f := observedFlags(kctx)
	if f == nil || f.MetricsFile == "" {
		return
	}
	end := time.Now()
	o := &f.obs
	o.mu.Lock()
	kind, key, acquired, res := o.kind, o.key, o.acquired, o.result
	o.mu.Unlock()
	if kind == "" { // refused before its lease was built
		kind, key = commandKind(kctx), commandKey(kctx)
	}
	wait := end.Sub(start) // never acquired: it waited all along
	if !acquired.IsZero() {
		wait = acquired.Sub(start)
	}
	r := metrics.Run{Kind: kind, Key: key, Outcome: metricsOutcome(res), ExitCode: code, Start: start, Duration: end.Sub(start), Wait: max(wait, 0)}
	if werr := writeMetricsFile(f.MetricsFile, r); werr != nil {
		logger.Error("metrics file not written; the run's exit status stands", "kind", kind, "key", key, "err", werr)
	}
}

// observedFlags are the ObserveFlags of the verb kctx selected, if it is a
// run verb.
func observedFlags(kctx *kong.Context) *ObserveFlags {
	if kctx == nil || kctx.Selected() == nil {
		return nil
	}
	t := kctx.Selected().Target
	if !t.IsValid() || !t.CanAddr() {
		return nil
	}
	if o, ok := t.Addr().Interface().(observed); ok {
		return o.observeFlags()
	}
	return nil
}

// commandKind is the lease kind a verb path names ("reserve run" is a
// reservation).
func commandKind(kctx *kong.Context) string {
	w := strings.Fields(kctx.Command())
	if len(w) == 0 {
		return ""
	}
	if w[0] == "reserve" {
		return "reservation"
	}
	return w[0]
}

// commandKey is the verb's first positional argument (its key or name).
func commandKey(kctx *kong.Context) string {
	for _, p := range kctx.Selected().Positional {
		if p.Name != "command" && p.Target.IsValid() && p.Target.Kind() == reflect.String {
			return p.Target.String()
		}
	}
	return ""
}

// verbAttrs are the kind and key of the verb kctx selected, for
// leasewrap's own error lines (none for a command line without a verb).
func verbAttrs(kctx *kong.Context) []slog.Attr {
	if kctx == nil || kctx.Selected() == nil {
		return nil
	}
	kind, key := commandKind(kctx), commandKey(kctx)
	if f := observedFlags(kctx); f != nil {
		f.obs.mu.Lock()
		if f.obs.kind != "" {
			kind, key = f.obs.kind, f.obs.key
		}
		f.obs.mu.Unlock()
	}
	var attrs []slog.Attr
	if kind != "" {
		attrs = append(attrs, slog.String("kind", kind))
	}
	if key != "" {
		attrs = append(attrs, slog.String("key", key))
	}
	return attrs
}
