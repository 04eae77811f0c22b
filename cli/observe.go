package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/kong"
	"github.com/oklog/run"

	"github.com/leasewrap/leasewrap/internal/metrics"
	"github.com/leasewrap/leasewrap/supervisor"
)

// ObserveFlags are the run verbs' metrics and health flags (see
// docs/METRICS.md). Neither costs anything when it is not given.
type ObserveFlags struct {
	MetricsFile string `name:"metrics-file" placeholder:"PATH" help:"After the run, update the Prometheus textfile PATH (name it *.prom, in node_exporter's textfile directory): runs by outcome, skips by reason, last success and failure. A problem with it is an error line; the job's exit code stands."`
	MetricsName string `name:"metrics-name" placeholder:"NAME" help:"The name label of this job's series in --metrics-file (default: the command's base name, so a per-date key adds no series)."`
	Listen      string `placeholder:"ADDR" help:"Serve /metrics, /healthz and /readyz over HTTP while the run lasts. A bare port is loopback (9100 = 127.0.0.1:9100); other interfaces only when named (:9100, 0.0.0.0:9100)."`
}

// errMetricsFile marks a malformed --metrics-file or --metrics-name.
var errMetricsFile = errors.New("metrics flags refused")

// check refuses a malformed --metrics-file, --metrics-name or --listen (64);
// what is on disk is met after the run and never costs the job its run.
func (f *ObserveFlags) check() error {
	if f.MetricsFile != "" {
		if err := checkMetricsPath(f.MetricsFile); err != nil {
			return fmt.Errorf("%w: %w: %v", ErrUsage, errMetricsFile, err)
		}
	}
	if f.MetricsName != "" {
		if f.MetricsFile == "" {
			return fmt.Errorf("%w: %w: --metrics-name names the series of --metrics-file; give --metrics-file too", ErrUsage, errMetricsFile)
		}
		if err := metrics.CheckName(f.MetricsName); err != nil {
			return fmt.Errorf("%w: %w: --metrics-name: %v", ErrUsage, errMetricsFile, err)
		}
	}
	if f.Listen != "" {
		if _, err := metrics.ListenAddr(f.Listen); err != nil {
			return fmt.Errorf("%w: --listen %v", ErrUsage, err)
		}
	}
	return nil
}

// checkMetricsPath refuses a --metrics-file that names a directory by its
// spelling alone.
func checkMetricsPath(path string) error {
	base := filepath.Base(path)
	if strings.HasSuffix(path, "/") || base == "." || base == ".." || base == "/" {
		return fmt.Errorf("--metrics-file %q names a directory; name a file in it, e.g. %s", path, filepath.Join(path, "job.prom"))
	}
	return nil
}

// metricsName is the name label of the run's series: --metrics-name, or
// the command's base name ("" when there is no command).
func (f *RunFlags) metricsName() string {
	if f.MetricsName != "" {
		return f.MetricsName
	}
	argv := f.Command
	if len(argv) > 0 && argv[0] == "--" {
		argv = argv[1:]
	}
	if len(argv) == 0 || argv[0] == "" {
		return ""
	}
	name := filepath.Base(argv[0])
	if len(name) > metrics.MaxNameLen {
		name = name[:metrics.MaxNameLen]
	}
	if metrics.CheckName(name) != nil {
		return ""
	}
	return name
}

// RunVerb is a verb that runs a job under a lease (it embeds RunFlags);
// Main tells run verbs from admin verbs by this type, never by name.
type RunVerb interface{ runFlags() *RunFlags }

func (f *RunFlags) runFlags() *RunFlags { return f }

// LeaseNamer is an optional interface of a run verb: its lease's kind and
// key before the Locker exists, for the error line.
type LeaseNamer interface{ LeaseName() (kind, key string) }

// Report is what a run verb's Supervise returns to Main: Err (an
// *ExitError or the failure; it unwraps to it) and what the run was.
type Report struct {
	Err       error
	Kind, Key string             // the Locker's
	Acquired  time.Time          // when the lease was acquired; zero if never
	Result    *supervisor.Result // what the run came to; nil if it failed (Err)
}

func (r *Report) Error() string { return r.Err.Error() }
func (r *Report) Unwrap() error { return r.Err }

// observer feeds the --listen state and notes the acquisition from the
// supervisor's events (supervisor.Config.OnEvent).
type observer struct {
	mu       sync.Mutex
	acquired time.Time
	live     *metrics.Live
}

// run runs the supervisor, with the --listen server beside it as an actor
// of the same run.Group when asked for, and reports what the run was.
func (f *ObserveFlags) run(ctx context.Context, cfg supervisor.Config, rep *Report) (supervisor.Result, error) {
	o := &observer{live: metrics.NewLive(rep.Kind, rep.Key)}
	if prev := cfg.OnEvent; prev != nil {
		cfg.OnEvent = func(ev supervisor.Event) { prev(ev); o.onEvent(ev) }
	} else {
		cfg.OnEvent = o.onEvent
	}
	res, err := f.serve(ctx, cfg, o.live)
	o.mu.Lock()
	rep.Acquired = o.acquired
	o.mu.Unlock()
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

// onEvent feeds the run's metrics from the supervisor's events; it is
// called from the supervisor's goroutines and never blocks.
func (o *observer) onEvent(ev supervisor.Event) {
	if ev.Type == supervisor.EventAcquired {
		o.mu.Lock()
		if o.acquired.IsZero() {
			o.acquired = ev.Time
		}
		o.mu.Unlock()
	}
	live := o.live
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

// metricsOutcome sorts a run into the textfile's outcome or skip reason
// (exactly one is set); res is nil when the run failed with an error.
func metricsOutcome(res *supervisor.Result) (outcome, skip string) {
	if res == nil {
		return metrics.OutcomeError, ""
	}
	switch res.Outcome {
	case supervisor.Ran:
		if res.ExitCode == 0 {
			return metrics.OutcomeSuccess, ""
		}
		return metrics.OutcomeFailure, ""
	case supervisor.TimedOut:
		return metrics.OutcomeTimeout, ""
	case supervisor.Lost:
		return metrics.OutcomeLost, ""
	case supervisor.Replayed:
		return "", metrics.SkipReplayed
	case supervisor.Conflict:
		if errors.Is(res.Cause, supervisor.ErrWaitTimeout) {
			return "", metrics.SkipWait
		}
		return "", metrics.SkipHeld
	case supervisor.Aborted:
		return "", metrics.SkipAborted
	}
	return metrics.OutcomeError, "" // a failed pre-step: the command never ran
}

// finishRun updates the --metrics-file of the run verb kctx ran, if any. A
// problem with the file is one ERROR line (also under -q); the exit status stands.
func finishRun(kctx *kong.Context, start time.Time, err error, code int, logger *slog.Logger) {
	rv := runVerb(kctx)
	if rv == nil {
		return
	}
	f := rv.runFlags()
	if f.MetricsFile == "" {
		return
	}
	r := metrics.Run{Name: f.metricsName(), Start: start, End: time.Now(), ExitCode: code}
	var rep *Report
	if errors.As(err, &rep) {
		r.Kind = rep.Kind
		r.Outcome, r.Skip = metricsOutcome(rep.Result)
		if rep.Result != nil {
			r.Splay = rep.Result.Splayed
		}
		if !rep.Acquired.IsZero() {
			r.Wait = max(rep.Acquired.Sub(start)-r.Splay, 0)
		}
	} else {
		r.Outcome = metrics.OutcomeError // refused before its lease was built
	}
	if r.Name == "" {
		// A command line refused before it named a command (its own
		// error line says so): nothing names the series.
		return
	}
	if werr := writeMetricsFile(f.MetricsFile, r); werr != nil {
		logger.Error("metrics file not updated; the run's exit status stands", "name", r.Name, "err", werr)
	}
}

// runVerb is the verb kctx selected if it is a run verb, else nil.
func runVerb(kctx *kong.Context) RunVerb {
	if kctx == nil || kctx.Selected() == nil {
		return nil
	}
	t := kctx.Selected().Target
	if !t.IsValid() || !t.CanAddr() {
		return nil
	}
	rv, _ := t.Addr().Interface().(RunVerb)
	return rv
}

// errorAttrs are the kind and key for the error line about err: the
// Locker's (a *Report), else the LeaseNamer's, else none.
func errorAttrs(kctx *kong.Context, err error) []slog.Attr {
	var kind, key string
	var rep *Report
	if errors.As(err, &rep) {
		kind, key = rep.Kind, rep.Key
	} else if n, ok := runVerb(kctx).(LeaseNamer); ok {
		kind, key = n.LeaseName()
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
