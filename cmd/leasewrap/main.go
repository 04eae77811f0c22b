// Command leasewrap holds a lease (flock, claim, reservation, session) for
// the command it wraps: it renews it while the child runs, forwards signals,
// stops the child if the lease is lost and exits with the child's code.
package main

import (
	"io"
	"os"

	"github.com/alecthomas/kong"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/supervisor"
)

// version is stamped by make (packaging/version.sh); cli.ReadVersion
// completes it with what the go command recorded.
var version string

const description = `Hold a lease for the command you wrap.

leasewrap takes a lease, starts CMD with the lease described in its
environment (and, for the flock kinds, its locked descriptor inherited),
renews the lease while CMD runs, forwards signals, stops CMD if the lease is
lost, and settles the lease when CMD exits, exiting with CMD's code.

Examples:
  # One at a time on this host: the lock flock(1) takes (silent in a crontab with -q).
  leasewrap flock run /var/lock/nightly.lock -- ./nightly.sh

  # Run the nightly build in one process at a time (a claim: a pid and a TTL).
  leasewrap claim run build:nightly --ttl 5m -- ./nightly.sh

  # Run the export once per date; a retry replays the recorded result.
  leasewrap reserve run "export-$(date +%F)" -- ./export.sh

  # Own a session for a daemon; refused while another instance owns it.
  leasewrap session run 5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42 --epoch 6 -- ./daemon

The commands below, kind by kind; leasewrap help KIND VERB (or KIND VERB
--help) explains one with its flags and examples, and man leasewrap-KIND
says the same. The etcd, Kubernetes and PostgreSQL kinds are served by
leasewrap-etcd, leasewrap-kube and leasewrap-pg, installed beside leasewrap.

Every run verb also takes --metrics-file PATH (Prometheus textfile after the
run) and --listen ADDR (/metrics, /healthz, /readyz while it runs).

Exit codes (run verbs): the child's code; 128+N if it died of signal N;
64 usage; 65 a record leasewrap refuses to touch; 69 etcd (or the cluster,
or PostgreSQL) did not answer; 70 internal or I/O error; 75 lease held by another
(--conflict-exit-code); 76 lease lost; 77 TLS or authentication refused;
127 or 126 the command (or leasewrap-etcd, -kube, -pg) was not found or cannot be
executed (as env(1); nothing ran). Admin verbs: 0 done, 1 held / nothing
there, 2 usage or error.`

func main() {
	supervisor.Gate() // never returns when this process is an exec gate or a job guard
	// A reader that has gone gives EPIPE, not SIGPIPE, unless it only prints.
	args := cli.HelpArgs(os.Args[1:]) // leasewrap help KIND VERB is KIND VERB --help
	stdout, stderr := cli.Streams(args)
	if served, err := dispatch(args); served {
		// The sibling was exec'd in place; only a failed exec returns
		// (127 missing, 126 not executable).
		os.Exit(cli.ExitCode(siblingExecError(err), cli.ErrorSink(cli.LogFormat(args, os.Getenv), stderr)))
	}
	os.Exit(realMain(args, stdout, stderr))
}

// realMain runs leasewrap with args; it returns the exit status.
func realMain(args []string, stdout, stderr io.Writer) int {
	args = cli.HelpArgs(args)
	if a := cli.ScanArgs(args); len(a.Words) == 2 && !a.Help {
		if k := kindNamed(a.Words[0]); k != nil && k.refuse != nil {
			if err := k.refuse(a.Words[1], args); err != nil {
				return cli.ExitCode(err, cli.ErrorSink(cli.LogFormat(args, os.Getenv), stderr))
			}
		}
	}
	c, g, opts := model(args)
	if _, whole := c.(*tree); !whole {
		// The lean models never print help (model.go): no description either.
		return cli.Main(c, g, "", cli.VersionLine("leasewrap", version, args), args, stdout, stderr, append(opts, kong.PostBuild(withoutHelp))...)
	}
	return cli.Main(c, g, description, cli.VersionLine("leasewrap", version, args), args, stdout, stderr, opts...)
}

// ioStreams are the process's standard output and error (cli.IO).
type ioStreams = cli.IO
