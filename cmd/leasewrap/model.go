package main

import (
	"github.com/alecthomas/kong"

	"github.com/leasewrap/leasewrap/cli"
)

// tree is the root of the whole command tree: the global flags. The kinds
// come from the table of kinds (kinds.go), added as kong options
// (treeCommands, kind.command).
type tree struct {
	cli.Globals `embed:""`
}

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
// helpless model, as a kong.PostBuild option: kong applies it before it
// interpolates the help strings, which these models never print. kong's
// errors name flags by name, placeholder, default and enum, which stay.
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

// model returns the command tree that parses args, the global flags inside
// it (filled in by the parse) and the kong options that add its commands.
// Building kong's model is most of leasewrap's own start-up, on every cron
// run (bench/LOG.md has the figures), so a command line that runs a verb
// or asks for --version gets a tree that holds only that:
//
//   - KIND VERB …   that verb alone, its help strings dropped (withoutHelp);
//   - --version     the global flags only;
//   - anything else, and any -h/--help, the whole tree.
//
// A verb's flags, arguments, validation and errors are the same in every
// model (TestHelplessModelsRefuseLikeTheTree).
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
// verbCmd `cmd:""` } `cmd:""` }, a static type (reflect.StructOf would
// cost more than it saves).
type oneVerb[T any] struct {
	cli.Globals `embed:""`
	Tree        T `embed:""`
}

func verb[T any]() (any, *cli.Globals) {
	c := &oneVerb[T]{}
	return c, &c.Globals
}

// The one-verb trees of each kind, by verb (the table of kinds points to
// them). A verb missing here (a new one) is parsed with the whole tree:
// correct, only slower.
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
