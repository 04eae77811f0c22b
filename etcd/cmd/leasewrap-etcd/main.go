// Command leasewrap-etcd is leasewrap's etcd backend: `leasewrap lock` and
// `leasewrap once` execute it in place (same pid), so the etcd client's
// start-up cost (gRPC, protobuf) stays off the local kinds' path. It can
// also be run directly with the same arguments. Its global flags, run
// flags, logging and exit codes are leasewrap's own (package cli); the
// etcd errors that mean 69 and 77 wrap lease.ErrUnavailable and
// lease.ErrNoPerm (package conn), which cli maps.
package main

import (
	"io"

	"github.com/leasewrap/leasewrap/cli"
)

// version is stamped by make (-X main.version=…, from
// packaging/version.sh); cli.ReadVersion completes it, or stands in for
// it, with what the go command recorded (go build, go install pkg@version).
var version string

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

func main() { cli.Exec(realMain) }

// ioStreams are the process's standard output and error (cli.IO).
type ioStreams = cli.IO

func realMain(args []string, stdout, stderr io.Writer) int {
	c := &rootCmd{}
	return cli.Main(c, &c.Globals, description, cli.VersionLine("leasewrap-etcd", version, args), args, stdout, stderr)
}
