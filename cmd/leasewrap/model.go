package main

import (
	"github.com/alecthomas/kong"

	"github.com/leasewrap/leasewrap/cli"
)

// tree is the root of the whole command tree: the global flags; the kinds
// are added as kong options from the table of kinds.
type tree struct {
	cli.Globals `embed:""`
}

// versionCLI is the model of `leasewrap --version`.
type versionCLI struct {
	cli.Globals `embed:""`
}

// helpless marks the models built when args ask for no help: they never
// print help, so kong gets none (withoutHelp).
type helpless interface{ helpless() }

func (*versionCLI) helpless() {}
func (*oneVerb[T]) helpless() {}

// withoutHelp, a kong.PostBuild option, empties a helpless model's help
// strings before kong interpolates them; what errors name stays.
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

// model returns the command tree that parses args, its global flags and the
// kong options that add its commands. Building kong's model dominates
// start-up (bench/LOG.md), so `KIND VERB` gets that verb alone without help,
// --version the global flags only, and anything else (or --help) the whole
// tree; a verb parses the same in every model.
func model(args []string) (any, *cli.Globals, []kong.Option) {
	a := cli.ScanArgs(args)
	if !a.Help && len(a.Words) == 0 && a.Version {
		c := &versionCLI{}
		return c, &c.Globals, nil
	}
	if k := kindNamed(a.Kind()); k != nil && !a.Help && len(a.Words) > 1 {
		if mk, ok := k.verbs[a.Words[1]]; ok {
			c, g := mk()
			return c, g, nil
		}
	}
	c := &tree{}
	return c, &c.Globals, treeCommands()
}

// oneVerb is the tree of a single verb: T is struct{ Kind struct{ Verb
// verbCmd `cmd:""` } `cmd:""` }, a static type.
type oneVerb[T any] struct {
	cli.Globals `embed:""`
	Tree        T `embed:""`
}

func verb[T any]() (any, *cli.Globals) {
	c := &oneVerb[T]{}
	return c, &c.Globals
}

// The one-verb trees of each kind, by verb; a verb missing here is parsed
// with the whole tree, only slower.
var (
	claimVerbs = map[string]func() (any, *cli.Globals){
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
	}
	reserveVerbs = map[string]func() (any, *cli.Globals){
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
	}
	sessionVerbs = map[string]func() (any, *cli.Globals){
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
	}
	flockVerbs = map[string]func() (any, *cli.Globals){
		"run": verb[struct {
			Flock struct {
				Run flockRunCmd `cmd:""`
			} `cmd:""`
		}],
	}
)
