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

// tree is the root of the whole command tree and of each kind's tree: the
// global flags. The kinds come from the table of kinds (kinds.go), added
// as kong options (treeCommands, kind.command).
type tree struct {
	cli.Globals `embed:""`
}

// kindTree is the root of one kind's tree (for `claim --help`, a mistyped
// verb): the global flags and that kind alone.
type kindTree struct {
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

// model returns the smallest command tree that parses args, the global
// flags inside it (filled in by the parse) and the kong options that add
// its commands.
func model(args []string) (any, *cli.Globals, []kong.Option) {
	a := cli.ScanArgs(args)
	words, help, version := a.Words, a.Help, a.Version
	if len(words) == 0 {
		if version && !help {
			c := &versionCLI{}
			return c, &c.Globals, nil
		}
		c := &tree{}
		return c, &c.Globals, treeCommands()
	}
	if k := kindNamed(words[0]); k != nil {
		if !help && len(words) > 1 {
			if mk, ok := k.verbs[words[1]]; ok {
				c, g := mk()
				return c, g, nil
			}
		}
		c := &kindTree{}
		return c, &c.Globals, []kong.Option{k.command()}
	}
	c := &tree{}
	return c, &c.Globals, treeCommands()
}

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

// The one-verb trees of each kind, by verb (the table of kinds points to
// them). A verb missing here (a new one) is parsed with its kind's tree:
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
