// Command leasewrap-pg is leasewrap's PostgreSQL backend: `leasewrap pg`
// executes it in place (same pid), so the pgx driver stays off the local
// kinds' path. It can also be run directly with the same arguments. Its
// global flags, run flags, logging and exit codes are leasewrap's own
// (package cli); the errors that mean 69 and 77 wrap
// lease.ErrUnavailable and lease.ErrNoPerm (package pg/conn), which cli
// maps.
package main

import (
	"io"

	"github.com/leasewrap/leasewrap/cli"
)

// version is stamped by make (-X main.version=…); cli.ReadVersion
// completes it, or stands in for it, with what the go command recorded.
var version string

type rootCmd struct {
	cli.Globals `embed:""`
	Pg          pgCmd `cmd:"" help:"A lease row in a PostgreSQL table, fenced across failover; once per key."`
}

type pgCmd struct {
	Run     pgRunCmd     `cmd:"" help:"Hold the lease NAME (a row in --table) while running a command."`
	Holder  pgHolderCmd  `cmd:"" help:"Show the lease NAME's row as JSON (exit 0 held, 1 free, 2 error)."`
	Once    pgOnceCmd    `cmd:"" help:"Run a command once per KEY across hosts; later runs replay its exit code."`
	Lookup  pgLookupCmd  `cmd:"" help:"Show once KEY's row as JSON (exit 0 running or done, 1 free, 2 error)."`
	Release pgReleaseCmd `cmd:"" help:"Free once KEY if run --run-id finished it (so the next run runs again)."`
}

const description = `leasewrap's PostgreSQL kind: a lease row in a normal, logged table, one
autocommit statement per operation, times from the server, a fence that
grows across failover; and once per key.

Exit codes (run verbs): the child's code; 128+N if it died of signal N;
64 usage (also a --ttl above the table's largest); 65 a table or row
leasewrap refuses (not its table, a newer schema); 69 PostgreSQL
unreachable within --dial-timeout (or read-only, or shutting down); 70
internal error; 75 held by another (--conflict-exit-code); 76 lease lost;
77 authentication, TLS or privilege refused. Admin verbs: 0, 1 free or not
released, 2 error (69 and 77 as above).`

func main() { cli.Exec(realMain) }

// ioStreams are the process's standard output and error (cli.IO).
type ioStreams = cli.IO

func realMain(args []string, stdout, stderr io.Writer) int {
	c := &rootCmd{}
	return cli.Main(c, &c.Globals, description, cli.VersionLine("leasewrap-pg", version, args), args, stdout, stderr)
}
