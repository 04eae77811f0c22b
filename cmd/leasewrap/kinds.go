package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/leasewrap/leasewrap/cli"
)

// kind is one row of the table of kinds: a first word, its help, and its
// verbs (leasewrap's own, or help-only stubs of a sibling's).
type kind struct {
	name  string // leasewrap NAME VERB …
	help  string // one line: --help's command list, the man pages
	group string // the heading --help lists it under
	// cmd returns the kind's command: one field per verb (kong tags give
	// each verb's help; model.go parses a verb alone from its field). For a
	// sibling's kind, stubs that only list them.
	cmd func() any
	// sibling serves the kind in leasewrap's place (dispatch); nil when
	// leasewrap serves it.
	sibling *sibling
	// refuse, when set, sees the kind's arguments before parsing, to refuse
	// foreign flags with what to write instead.
	refuse func(verb string, args []string) error
}

// The headings of --help's command list.
const (
	groupLocal = "One host (or hosts sharing a directory)"
	groupEtcd  = "Across hosts, on etcd (served by leasewrap-etcd)"
	groupKube  = "On Kubernetes (served by leasewrap-kube)"
	groupPg    = "On PostgreSQL (served by leasewrap-pg)"
)

// The sibling executables.
var (
	etcdExe = &sibling{"leasewrap-etcd", "in a checkout of leasewrap, make build builds it into bin/, or go install ./etcd/cmd/leasewrap-etcd"}
	kubeExe = &sibling{"leasewrap-kube", "in a checkout of leasewrap, make build builds it into bin/, or go install ./kube/cmd/leasewrap-kube"}
	pgExe   = &sibling{"leasewrap-pg", "in a checkout of leasewrap, make build builds it into bin/, or go install ./pg/cmd/leasewrap-pg"}
)

// kinds is the one table of leasewrap's kinds, in --help's order: the
// command trees, dispatch, help, man pages and completions come from it.
var kinds = []kind{
	{name: "flock", group: groupLocal, cmd: func() any { return &flockCmd{} }, refuse: flockRefusals,
		help: "A flock(2) on a file, the lock flock(1) takes: the simplest kind, one host."},
	{name: "claim", group: groupLocal, cmd: func() any { return &claimCmd{} },
		help: "Work claims: a lock file with PID + TTL liveness (fno claims protocol)."},
	{name: "reserve", group: groupLocal, cmd: func() any { return &reserveCmd{} },
		help: "Idempotency reservations: run a job at most once per key, replay its result (orchestratectl protocol)."},
	{name: "session", group: groupLocal, cmd: func() any { return &sessionCmd{} },
		help: "Session owner leases with flock liveness (bcode session protocol)."},
	{name: "lock", group: groupEtcd, cmd: func() any { return &etcdLockCmd{} }, sibling: etcdExe,
		help: "A mutex on etcd, interoperable with etcdctl lock, fenced."},
	{name: "once", group: groupEtcd, cmd: func() any { return &etcdOnceCmd{} }, sibling: etcdExe,
		help: "Run a command at most once per key across hosts, on etcd."},
	{name: "kube", group: groupKube, cmd: func() any { return &kubeCmd{} }, sibling: kubeExe,
		help: "Hold a coordination.k8s.io Lease, interoperable with client-go leader election, fenced."},
	{name: "pg", group: groupPg, cmd: func() any { return &pgCmd{} }, sibling: pgExe,
		help: "A lease row in a PostgreSQL table, fenced across failover; once per key."},
}

// kindNamed is the row of the kind called name, or nil.
func kindNamed(name string) *kind {
	for i := range kinds {
		if kinds[i].name == name {
			return &kinds[i]
		}
	}
	return nil
}

// command is the kong option that adds k to a tree.
func (k *kind) command() kong.Option {
	return kong.DynamicCommand(k.name, k.help, k.group, k.cmd())
}

// treeCommands are the options that add every kind to a tree, and the
// commands about leasewrap itself: help, completion and (hidden) gendocs.
func treeCommands() []kong.Option {
	opts := make([]kong.Option, 0, len(kinds)+1)
	for i := range kinds {
		opts = append(opts, kinds[i].command())
	}
	return append(opts,
		kong.DynamicCommand("help", "Show the help of a kind or verb: leasewrap help [KIND [VERB]] (the same as KIND VERB --help).", "", &helpCmd{}),
		kong.DynamicCommand("completion", "Print the bash, zsh or fish completion script.", "", &completionCmd{}),
		kong.DynamicCommand("gendocs", "Write the man pages and completion scripts into directories (for packages).", "", &gendocsCmd{}, "hidden:\"\""))
}

// Help-only stubs of the siblings' verbs: listed in help, never parsed
// here (dispatch execs the sibling first).
type (
	etcdLockCmd struct {
		Run     siblingVerbCmd `cmd:"" help:"Hold the lock NAME while running a command."`
		Holders siblingVerbCmd `cmd:"" help:"Show the queue of lock NAME as JSON (create-revision order; the first holds it)."`
	}
	etcdOnceCmd struct {
		Run     siblingVerbCmd `cmd:"" help:"Run a command once per KEY across hosts; later runs replay its exit code."`
		Lookup  siblingVerbCmd `cmd:"" help:"Show KEY's record as JSON."`
		Release siblingVerbCmd `cmd:"" help:"Remove KEY's record if it belongs to run --run-id (so the next run runs again)."`
	}
	kubeCmd struct {
		Run    siblingVerbCmd `cmd:"" help:"Hold the Lease NAME while running a command."`
		Holder siblingVerbCmd `cmd:"" help:"Show the Lease NAME's holder as JSON (exit 0 held, 1 not held or absent, 2 error)."`
	}
	pgCmd struct {
		Run     siblingVerbCmd `cmd:"" help:"Hold the lease NAME (a row in --table) while running a command."`
		Holder  siblingVerbCmd `cmd:"" help:"Show the lease NAME's row as JSON (exit 0 held, 1 free, 2 error)."`
		Once    siblingVerbCmd `cmd:"" help:"Run a command once per KEY across hosts; later runs replay its exit code."`
		Lookup  siblingVerbCmd `cmd:"" help:"Show once KEY's row as JSON (exit 0 running or done, 1 free, 2 error)."`
		Release siblingVerbCmd `cmd:"" help:"Free once KEY if run --run-id finished it (so the next run runs again)."`
	}
)

// siblingVerbCmd takes whatever follows and hands it to the sibling.
type siblingVerbCmd struct {
	Args []string `arg:"" optional:"" passthrough:"" help:"NAME or KEY, flags, and -- CMD [ARG…] for run (see leasewrap help KIND VERB)."`
}

// Run execs the sibling in place, when dispatch did not recognise the
// command line; it returns only on failure.
func (c *siblingVerbCmd) Run() error {
	if served, err := dispatch(os.Args[1:]); served {
		return siblingExecError(err)
	}
	exe := "its executable"
	if k := kindNamed(cli.ScanArgs(os.Args[1:]).Kind()); k != nil && k.sibling != nil {
		exe = k.sibling.exe
	}
	return fmt.Errorf("this verb is served by %s; run it directly: %s %s", exe, exe, strings.Join(os.Args[1:], " "))
}

// helpCmd is `leasewrap help [KIND [VERB]]`. cli.HelpArgs turns it into
// `KIND VERB --help` before anything parses it, so Run is not reached.
type helpCmd struct {
	Command []string `arg:"" optional:"" help:"The kind and verb to explain, e.g. flock run."`
}

func (c *helpCmd) Run() error {
	return fmt.Errorf("%w: help: use leasewrap help [KIND [VERB]]", cli.ErrUsage)
}
