// Command leasewrap-etcd is leasewrap's etcd backend: `leasewrap lock` and
// `leasewrap once` execute it in place (same pid), so the etcd client's
// start-up cost (gRPC, protobuf) stays off the local kinds' path. It can
// also be run directly with the same arguments.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/alecthomas/kong"
	"github.com/lmittmann/tint"
	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/supervisor"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// globals are the flags every invocation has (the same as leasewrap's).
type globals struct {
	LogFormat string           `help:"Log format on stderr: auto (coloured text on a terminal, plain text otherwise), text or json." enum:"auto,text,json" default:"auto" env:"LEASEWRAP_LOG_FORMAT"`
	LogLevel  string           `help:"Least severe level logged: debug, info, warn or error." enum:"debug,info,warn,error" default:"info" env:"LEASEWRAP_LOG_LEVEL"`
	Quiet     bool             `short:"q" help:"Log only warnings and errors (same as --log-level=warn)."`
	Version   kong.VersionFlag `help:"Print the version and exit."`
}

type cli struct {
	globals `embed:""`
	Lock    lockCmd `cmd:"" help:"A mutex on etcd, interoperable with etcdctl lock, fenced."`
	Once    onceCmd `cmd:"" help:"Run a command at most once per key across hosts, on etcd."`
}

const description = `leasewrap's etcd kinds: lock (interoperable with etcdctl lock) and once.

Exit codes (run verbs): the child's code; 128+N if it died of signal N;
64 usage; 65 a record leasewrap refuses to touch; 69 etcd unreachable within
--dial-timeout; 70 internal error; 75 held by another (--conflict-exit-code);
76 lease lost; 77 TLS or authentication refused.`

func main() {
	supervisor.Gate() // never returns when this process is an exec gate
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

type exitNow int

type ioStreams struct {
	Out io.Writer
	Err io.Writer
}

func realMain(args []string, stdout, stderr io.Writer) int {
	c := &cli{}
	parser, err := kong.New(c,
		kong.Name("leasewrap"),
		kong.Description(description),
		kong.UsageOnError(),
		kong.Vars{"version": version},
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(exitNow(code)) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, FlagsLast: true}),
	)
	if err != nil {
		fmt.Fprintf(stderr, "leasewrap: internal error building the CLI: %v\n", err)
		return exitInternal
	}
	code := exitInternal
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
		kctx, perr := parser.Parse(args)
		if perr != nil {
			fmt.Fprintf(stderr, "leasewrap: %v\n", perr)
			code = exitUsage
			return
		}
		logger := newLogger(&c.globals, stderr)
		kctx.BindTo(context.Background(), (*context.Context)(nil))
		kctx.Bind(logger)
		kctx.Bind(ioStreams{Out: stdout, Err: stderr})
		code = exitCode(kctx.Run(), stderr)
	}()
	return code
}

func newLogger(c *globals, w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	switch c.LogLevel {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	if c.Quiet && level < slog.LevelWarn {
		level = slog.LevelWarn
	}
	format := c.LogFormat
	if format == "auto" {
		format = "text"
		if f, ok := w.(*os.File); ok {
			if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
				format = "tint"
			}
		}
	}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
	case "tint":
		return slog.New(tint.NewHandler(w, &tint.Options{Level: level, TimeFormat: time.TimeOnly}))
	default:
		return slog.New(tint.NewHandler(w, &tint.Options{Level: level, TimeFormat: time.RFC3339, NoColor: true}))
	}
}

var errUsage = errors.New("usage")
