package main

import (
	"github.com/alecthomas/kong"

	"github.com/leasewrap/leasewrap/cli"
)

// Building kong's model (reflection over struct tags, help interpolation)
// is most of leasewrap's own start-up, and it is on the path of every cron
// job. So the model is only as big as the command line needs:
//
//   - KIND VERB …   a tree holding only that verb (its flags, arguments,
//     help, validation and errors are the verb's own, so nothing changes);
//   - KIND …        that kind's verbs (for `claim --help`, a mistyped verb);
//   - --version     the global flags only;
//   - anything else the whole tree (help, errors naming every kind).
//
// With -h/--help anywhere, the verb-only and version-only models are not
// used, so help shows the same siblings and commands it always did.

// tree is the whole command tree. Each kind's verbs live in their own files.
type tree struct {
	cli.Globals `embed:""`
	Claims      claimKind   `embed:""`
	Reserves    reserveKind `embed:""`
	Sessions    sessionKind `embed:""`
	Flocks      flockKind   `embed:""`
	Etcd        etcdKinds   `embed:""` // help only: lock and once run in leasewrap-etcd
}

// The kinds, each with its one-line help, shared by the whole tree and
// the one-kind trees.
type (
	claimKind struct {
		Claim claimCmd `cmd:"" help:"Work claims: a lock file with PID + TTL liveness (fno claims protocol)."`
	}
	reserveKind struct {
		Reserve reserveCmd `cmd:"" help:"Idempotency reservations: run a job at most once per key, replay its result (orchestratectl protocol)."`
	}
	sessionKind struct {
		Session sessionCmd `cmd:"" help:"Session owner leases with flock liveness (bcode session protocol)."`
	}
	flockKind struct {
		Flock flockCmd `cmd:"" help:"A flock(2) on a file, the lock flock(1) takes: the simplest kind, one host."`
	}
)

// versionCLI is the model of `leasewrap --version`.
type versionCLI struct {
	cli.Globals `embed:""`
}

// helpless marks the models built only when args ask for no help
// (--version alone, one verb): they never print the program's
// description or any help string, so neither is given to kong (see
// withoutHelp).
type helpless interface{ helpless() }

func (*versionCLI) helpless() {}
func (*oneVerb[T]) helpless() {}

// withoutHelp empties the help of every command, flag and argument of a
// helpless model. It runs as a kong.PostBuild option, which kong applies
// before it interpolates the help strings with its regexp: a third of
// kong.New's time, for text these models never print. Nothing else reads
// the help: kong's errors name commands, flags and arguments by name,
// placeholder, default and enum, which stay
// (TestHelplessModelsRefuseLikeTheTree).
func withoutHelp(k *kong.Kong) error {
	return kong.Visit(k.Model.Node, func(n kong.Visitable, next kong.Next) error {
		switch n := n.(type) {
		case *kong.Node:
			n.Help, n.Detail = "", ""
		case *kong.Value:
			n.Help = ""
		}
		return next(nil)
	})
}

// model returns the smallest command tree that parses args and the global
// flags inside it (filled in by the parse).
func model(args []string) (any, *cli.Globals) {
	a := cli.ScanArgs(args)
	words, help, version := a.Words, a.Help, a.Version
	if len(words) == 0 {
		if version && !help {
			c := &versionCLI{}
			return c, &c.Globals
		}
		c := &tree{}
		return c, &c.Globals
	}
	if !help && len(words) > 1 {
		if mk, ok := verbModels[words[0]][words[1]]; ok {
			return mk()
		}
	}
	switch words[0] {
	case "claim":
		c := &claimCLI{}
		return c, &c.Globals
	case "reserve":
		c := &reserveCLI{}
		return c, &c.Globals
	case "session":
		c := &sessionCLI{}
		return c, &c.Globals
	case "flock":
		c := &flockCLI{}
		return c, &c.Globals
	}
	c := &tree{}
	return c, &c.Globals
}

// The one-kind trees.
type (
	claimCLI struct {
		cli.Globals `embed:""`
		Kind        claimKind `embed:""`
	}
	reserveCLI struct {
		cli.Globals `embed:""`
		Kind        reserveKind `embed:""`
	}
	sessionCLI struct {
		cli.Globals `embed:""`
		Kind        sessionKind `embed:""`
	}
	flockCLI struct {
		cli.Globals `embed:""`
		Kind        flockKind `embed:""`
	}
)

// oneVerb is the tree of a single verb: T is struct{ Kind struct{ Verb
// verbCmd `cmd:""` } `cmd:""` }. (Static types: building them with
// reflect.StructOf costs more than it saves.)
type oneVerb[T any] struct {
	cli.Globals `embed:""`
	Tree        T `embed:""`
}

func verb[T any]() (any, *cli.Globals) {
	c := &oneVerb[T]{}
	return c, &c.Globals
}

// verbModels are the one-verb trees by kind and verb. A verb missing here
// (a new one) is parsed with its kind's tree: correct, only slower.
var verbModels = map[string]map[string]func() (any, *cli.Globals){
	"claim": {
		"run": verb[struct {
			Claim struct {
				Run claimRunCmd `cmd:""`
			} `cmd:""`
		}],
		"acquire": verb[struct {
			Claim struct {
				Acquire claimAcquireCmd `cmd:""`
			} `cmd:""`
		}],
		"release": verb[struct {
			Claim struct {
				Release claimReleaseCmd `cmd:""`
			} `cmd:""`
		}],
		"status": verb[struct {
			Claim struct {
				Status claimStatusCmd `cmd:""`
			} `cmd:""`
		}],
		"renew": verb[struct {
			Claim struct {
				Renew claimRenewCmd `cmd:""`
			} `cmd:""`
		}],
		"list": verb[struct {
			Claim struct {
				List claimListCmd `cmd:""`
			} `cmd:""`
		}],
	},
	"reserve": {
		"run": verb[struct {
			Reserve struct {
				Run reserveRunCmd `cmd:""`
			} `cmd:""`
		}],
		"lookup": verb[struct {
			Reserve struct {
				Lookup reserveLookupCmd `cmd:""`
			} `cmd:""`
		}],
		"release": verb[struct {
			Reserve struct {
				Release reserveReleaseCmd `cmd:""`
			} `cmd:""`
		}],
		"hash": verb[struct {
			Reserve struct {
				Hash reserveHashCmd `cmd:""`
			} `cmd:""`
		}],
	},
	"session": {
		"run": verb[struct {
			Session struct {
				Run sessionRunCmd `cmd:""`
			} `cmd:""`
		}],
		"maintain": verb[struct {
			Session struct {
				Maintain sessionMaintainCmd `cmd:""`
			} `cmd:""`
		}],
		"owners": verb[struct {
			Session struct {
				Owners sessionOwnersCmd `cmd:""`
			} `cmd:""`
		}],
	},
	"flock": {
		"run": verb[struct {
			Flock struct {
				Run flockRunCmd `cmd:""`
			} `cmd:""`
		}],
	},
}
