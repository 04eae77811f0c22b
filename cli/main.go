package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/leasewrap/leasewrap/supervisor"
)

// IO are the process's standard output and error, bound into every verb
// (so tests can capture them); Err follows --log-format.
type IO struct {
	Out io.Writer
	Err io.Writer
}

// exitNow carries kong's own exit (after --help, --version) out of Parse.
type exitNow int

// Main parses args against model (a kong tree whose global flags are g),
// configures logging once, runs the chosen verb and returns the exit status
// (ExitCode). Verbs may ask for a context.Context, the *slog.Logger and IO;
// opts are given to kong.New after Main's own.
func Main(model any, g *Globals, description, version string, args []string, stdout, stderr io.Writer, opts ...kong.Option) int {
	format := LogFormat(args, os.Getenv)
	// One terminal check (an ioctl) for the process's lines, not one per
	// handler: "auto" resolves the same way every time.
	auto := resolveFormat("auto", stderr)
	resolve := func(f string) string {
		if f == "" || f == "auto" {
			return auto
		}
		return f
	}
	errOut := ErrorSink(resolve(format), stderr)
	bare := ScanArgs(args).Bare()
	if bare {
		// Nothing to run: the usage, on stderr, and 64.
		args, stdout = append(args[:len(args):len(args)], "--help"), stderr
	}
	parser, err := kong.New(model, append([]kong.Option{
		kong.Name("leasewrap"),
		kong.Description(description),
		kong.UsageOnError(),
		kong.Vars{"version": version},
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(exitNow(code)) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, FlagsLast: true}),
		kong.TypeMapper(reflect.TypeOf(time.Duration(0)), durationMapper{}),
	}, opts...)...)
	if err != nil {
		fmt.Fprintf(errOut, "leasewrap: internal error building the CLI: %v\n", err)
		return ExitInternal
	}
	code := ExitInternal
	func() {
		defer func() {
			if r := recover(); r != nil {
				e, ok := r.(exitNow)
				if !ok {
					panic(r)
				}
				code = int(e)
			}
		}()
		start := time.Now()
		kctx, perr := parser.Parse(args)
		if perr != nil {
			var pe *kong.ParseError
			if errors.As(perr, &pe) {
				kctx = pe.Context // Parse returns no context on error
			}
			if pe != nil && pe.Context != nil {
				errOut = ErrorSink(resolve(format), stderr, errorAttrs(pe.Context, perr)...)
			}
			msg := perr.Error()
			if strings.HasPrefix(msg, "unknown flag ") || strings.HasPrefix(msg, "unexpected argument ") {
				if s := Suggest(parser.Model.Node, args); s != "" {
					msg, _, _ = strings.Cut(msg, ", did you mean")
					msg += "; did you mean: " + s
				}
			}
			if verb := verbPath(kctx); verb != "" && !strings.HasPrefix(msg, verb+":") {
				msg = verb + ": " + msg // kong's own errors do not say which verb
			}
			fmt.Fprintf(errOut, "leasewrap: %s\n", msg)
			code = UsageCode(kctx)
			// A refused run verb still counts in its --metrics-file,
			// unless that is the flag refused.
			if !errors.Is(perr, errMetricsFile) {
				finishRun(kctx, start, perr, code, newLogger(g, resolve(g.LogFormat), stderr))
			}
			return
		}
		logger := newLogger(g, resolve(g.LogFormat), stderr)
		kctx.BindTo(context.Background(), (*context.Context)(nil))
		kctx.Bind(logger)
		errOut = ErrorSink(resolve(g.LogFormat), stderr)
		out := &outputWriter{w: stdout}
		kctx.Bind(IO{Out: out, Err: errOut})
		err := outputFailed(kctx.Run(), UsageCode(kctx) == AdminError, out)
		code = ExitCode(err, finalSink(g, err, resolve(g.LogFormat), stderr, errorAttrs(kctx, err)...))
		finishRun(kctx, start, err, code, logger) // --metrics-file, from the verb's *Report
	}()
	if bare && code == 0 {
		return ExitUsage
	}
	return code
}

// Exec is the whole main of a one-tree executable (leasewrap-etcd,
// leasewrap-kube): it serves the supervisor's helper roles (supervisor.Gate),
// prepares the streams (Streams) and exits with realMain's status.
func Exec(realMain func(args []string, stdout, stderr io.Writer) int) {
	supervisor.Gate()
	args := HelpArgs(os.Args[1:]) // help KIND VERB is KIND VERB --help
	stdout, stderr := Streams(args)
	os.Exit(realMain(args, stdout, stderr))
}
