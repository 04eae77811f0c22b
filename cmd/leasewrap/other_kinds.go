package main

import (
	"fmt"
	"os"
	"strings"
)

// etcdKinds lists lock and once in the whole tree's help (its command
// list), so `leasewrap --help` names every kind's verbs. leasewrap never
// parses them itself: main executes leasewrap-etcd for them before kong
// runs (dispatch), which parses and explains them in full.
type etcdKinds struct {
	Lock etcdLockCmd `cmd:"" help:"A mutex on etcd, interoperable with etcdctl lock, fenced (served by leasewrap-etcd)."`
	Once etcdOnceCmd `cmd:"" help:"Run a command at most once per key across hosts, on etcd (served by leasewrap-etcd)."`
}

type (
	etcdLockCmd struct {
		Run     etcdVerbCmd `cmd:"" help:"Hold the lock NAME on etcd while running a command."`
		Holders etcdVerbCmd `cmd:"" help:"Show the queue of lock NAME as JSON (the first holds it)."`
	}
	etcdOnceCmd struct {
		Run     etcdVerbCmd `cmd:"" help:"Run a command at most once per KEY across hosts; replay its result."`
		Lookup  etcdVerbCmd `cmd:"" help:"Show KEY's record as JSON."`
		Release etcdVerbCmd `cmd:"" help:"Remove KEY's record, only if it names --run-id."`
	}
)

// etcdVerbCmd takes whatever follows and hands it to leasewrap-etcd.
type etcdVerbCmd struct {
	Args []string `arg:"" optional:"" passthrough:"" help:"NAME or KEY, flags, and -- CMD [ARG…] for run (see leasewrap lock run --help)."`
}

// Run executes leasewrap-etcd in place with leasewrap's arguments. It is
// reached only when dispatch did not recognise the command line (it
// returns only on failure).
func (c *etcdVerbCmd) Run() error {
	if served, err := dispatch(os.Args[1:]); served {
		return siblingExecError(err)
	}
	return fmt.Errorf("lock and once are served by leasewrap-etcd; run it directly: leasewrap-etcd %s", strings.Join(os.Args[1:], " "))
}
