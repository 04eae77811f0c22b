// Command leasewrap-kube is leasewrap's Kubernetes backend: `leasewrap
// kube` executes it in place (same pid), so client-go's start-up cost stays
// off the local kinds' path. It can also be run directly with the same
// arguments. Its global flags, run flags, logging and exit codes are
// leasewrap's own (package cli); the API errors that mean 69 and 77 wrap
// lease.ErrUnavailable and lease.ErrNoPerm (package kubelease), which cli
// maps.
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
	Kube        kubeCmd `cmd:"" help:"Hold a coordination.k8s.io Lease, interoperable with client-go leader election, fenced."`
}

type kubeCmd struct {
	Run    runCmd    `cmd:"" help:"Hold the Lease NAME while running a command."`
	Holder holderCmd `cmd:"" help:"Show the Lease NAME's holder as JSON (exit 0 held, 1 not held or absent, 2 error)."`
}

const description = `leasewrap's Kubernetes kind: a coordination.k8s.io/v1 Lease, interoperable
with client-go leader election (resourcelock.LeaseLock), fenced.

Exit codes (run verbs): the child's code; 128+N if it died of signal N;
64 usage (also a namespace that does not exist); 65 a Lease leasewrap does
not take (spec.strategy set: coordinated leader election; leaseTransitions
at its maximum); 69 the API server, or the kubeconfig's exec credential
plugin, did not answer within --request-timeout; 70 internal error; 75 held
by another (--conflict-exit-code); 76 lease lost; 77 credentials refused
(401), RBAC forbids (403), TLS refused (or http:// at a TLS port), or the
exec credential plugin failed. Admin verbs: 0, 1 not held, 2 error (69 and
77 as above).`

func main() { cli.Exec(realMain) }

// ioStreams are the process's standard output and error (cli.IO).
type ioStreams = cli.IO

func realMain(args []string, stdout, stderr io.Writer) int {
	c := &rootCmd{}
	return cli.Main(c, &c.Globals, description, cli.VersionLine("leasewrap-kube", version, args), args, stdout, stderr)
}
