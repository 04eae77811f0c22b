// Command leasewrap-etcd is leasewrap's etcd backend: `leasewrap lock` and
// `leasewrap once` execute it in place (same pid), so the etcd client's
// start-up cost (gRPC, protobuf) stays off the local kinds' path. It can
// also be run directly with the same arguments. Its global flags, run
// flags, logging and exit codes are leasewrap's own (internal/cli); the
// etcd errors carry their own codes, 69 and 77 (package conn).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/alecthomas/kong"

	"github.com/leasewrap/leasewrap/internal/cli"
	"github.com/leasewrap/leasewrap/supervisor"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

type rootCmd struct {
	cli.Globals `embed:""`
	Lock        lockCmd `cmd:"" help:"A mutex on etcd, interoperable with etcdctl lock, fenced."`
	Once        onceCmd `cmd:"" help:"Run a command at most once per key across hosts, on etcd."`
}

const description = `leasewrap's etcd kinds: lock (interoperable with etcdctl lock) and once.

Exit codes (run verbs): the child's code; 128+N if it died of signal N;
64 usage; 65 a record leasewrap refuses to touch; 69 etcd unreachable within
--dial-timeout; 70 internal error; 75 held by another (--conflict-exit-code);
76 lease lost; 77 TLS or authentication refused. Admin verbs: 0, 1 nothing
there or not removed, 2 error (69 and 77 as above).`

func main() {
	supervisor.Gate() // never returns when this process is an exec gate or a job guard
	cli.CatchSIGPIPE()
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

type exitNow int

// ioStreams are the process's standard output and error.
type ioStreams struct {
	Out io.Writer
	Err io.Writer
}

func realMain(args []string, stdout, stderr io.Writer) int {
	c := &rootCmd{}
	errOut := cli.ErrorSink(cli.FormatFromArgs(args, os.Getenv), stderr)
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
		fmt.Fprintf(errOut, "leasewrap: internal error building the CLI: %v\n", err)
		return cli.ExitInternal
	}
	code := cli.ExitInternal
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
			var pe *kong.ParseError
			if errors.As(perr, &pe) {
				kctx = pe.Context
			}
			fmt.Fprintf(errOut, "leasewrap: %v\n", perr)
			code = cli.UsageCode(kctx)
			return
		}
		logger := cli.NewLogger(&c.Globals, stderr)
		kctx.BindTo(context.Background(), (*context.Context)(nil))
		kctx.Bind(logger)
		errOut = cli.ErrorSink(c.LogFormat, stderr)
		kctx.Bind(ioStreams{Out: stdout, Err: errOut})
		code = cli.ExitCode(kctx.Run(), errOut)
	}()
	return code
}
