// Command leasewrap holds a lease for the command it wraps: it takes a
// flock, claim, reservation or session lease, runs the child with the lease
// described in its environment, keeps the lease alive while the child runs,
// forwards signals, stops the child if the lease is lost, and settles the
// lease when the child exits, exiting with the child's code.
package main

import (
	"io"
	"os"

	"github.com/alecthomas/kong"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/supervisor"
)

// version is stamped by make (-X main.version=…, from
// packaging/version.sh); cli.ReadVersion completes it, or stands in for
// it, with what the go command recorded (go build, go install pkg@version).
var version string

const description = `Hold a lease for the command you wrap.

leasewrap takes a lease, starts CMD with the lease described in its
environment (and, for the flock kinds, its locked descriptor inherited),
renews the lease while CMD runs, forwards signals, stops CMD if the lease is
lost, and settles the lease when CMD exits, exiting with CMD's code.

Examples:
  # One at a time on this host: the lock flock(1) takes (silent in a crontab with -q).
  leasewrap flock run /var/lock/nightly.lock -- ./nightly.sh

  # Run the nightly build on at most one machine process at a time.
  leasewrap claim run build:nightly --ttl 5m -- ./nightly.sh

  # Run the export once per date; a retry replays the recorded result.
  leasewrap reserve run "export-$(date +%F)" -- ./export.sh

  # Own a session for a daemon; refused while another instance owns it.
  leasewrap session run 5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42 --epoch 6 -- ./daemon

Every kind and its run verb:
  leasewrap flock run PATH -- CMD                  # flock(2) on PATH, as flock(1) takes it
  leasewrap claim run KEY -- CMD                   # fno work claim (PID + TTL)
  leasewrap reserve run KEY -- CMD                 # at most once per key, replayed
  leasewrap session run SID --epoch N -- CMD       # bcode session owner
Across hosts, on etcd (served by leasewrap-etcd, installed beside leasewrap):
  leasewrap lock run NAME --endpoints URL -- CMD   # interoperable with etcdctl lock
  leasewrap lock holders NAME
  leasewrap once run KEY --endpoints URL -- CMD    # run once per key across hosts
  leasewrap once lookup KEY / once release KEY --run-id ID
On Kubernetes (served by leasewrap-kube, installed beside leasewrap):
  leasewrap kube run NAME -- CMD                   # a coordination.k8s.io Lease
  leasewrap kube holder NAME

Every run verb also takes --metrics-file PATH (Prometheus textfile after the
run) and --listen ADDR (/metrics, /healthz, /readyz while it runs).

Exit codes (run verbs): the child's code; 128+N if it died of signal N;
64 usage; 65 a record leasewrap refuses to touch; 69 etcd (or the cluster)
did not answer; 70 internal or I/O error; 75 lease held by another
(--conflict-exit-code); 76 lease lost; 77 TLS or authentication refused;
127 or 126 the command (or leasewrap-etcd, leasewrap-kube) was not found or cannot be
executed (as env(1); nothing ran). Admin verbs: 0 done, 1 held / nothing
there, 2 usage or error.`

func main() {
	supervisor.Gate() // never returns when this process is an exec gate or a job guard
	// A reader that has gone gives EPIPE, not SIGPIPE, unless it only prints.
	stdout, stderr := cli.Streams(os.Args[1:])
	if served, err := dispatch(os.Args[1:]); served {
		// lock and once live in leasewrap-etcd, kube in leasewrap-kube, so
		// their clients' start-up never reaches the local kinds: the
		// sibling was exec'd in place (the duplicates close on exec).
		// Only a failed exec returns: 127 missing, 126 not executable.
		os.Exit(cli.ExitCode(siblingExecError(err), cli.ErrorSink(cli.LogFormat(os.Args[1:], os.Getenv), stderr)))
	}
	os.Exit(realMain(os.Args[1:], stdout, stderr))
}

// realMain runs leasewrap with args; it returns the exit status.
func realMain(args []string, stdout, stderr io.Writer) int {
	c, g := model(args)
	if _, ok := c.(helpless); ok {
		// kong interpolates the description and every help string (a
		// regexp pass over every byte) whether or not help is shown, and
		// these models never show it: help takes the tree.
		return cli.Main(c, g, "", cli.VersionLine("leasewrap", version, args), args, stdout, stderr, kong.PostBuild(withoutHelp))
	}
	return cli.Main(c, g, description, cli.VersionLine("leasewrap", version, args), args, stdout, stderr)
}

// ioStreams are the process's standard output and error (cli.IO).
type ioStreams = cli.IO
