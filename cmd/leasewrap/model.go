package main

import (
	"reflect"
	"strings"

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

// withoutHelp, a kong.PostBuild option, empties a lean model's help
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
	if k := kindNamed(a.Kind()); k != nil && k.sibling == nil && !a.Help && len(a.Words) > 1 {
		if c, g := k.verbModel(a.Words[1]); c != nil {
			return c, g, nil
		}
	}
	c := &tree{}
	return c, &c.Globals, treeCommands()
}

// verbModel is the tree of k's verb alone, the one field of k.cmd()'s struct
// that verb names, or nil if none does. It is built by reflection, so that
// the kind's struct stays the one list of its verbs.
func (k *kind) verbModel(verb string) (any, *cli.Globals) {
	kt := reflect.TypeOf(k.cmd()).Elem()
	for i := range kt.NumField() {
		f := kt.Field(i)
		if strings.ToLower(f.Name) != verb {
			continue
		}
		one := reflect.StructOf([]reflect.StructField{{Name: f.Name, Type: f.Type, Tag: `cmd:""`}})
		root := reflect.New(reflect.StructOf([]reflect.StructField{
			{Name: "Globals", Type: reflect.TypeFor[cli.Globals](), Tag: `embed:""`},
			{Name: "Kind", Type: one, Tag: reflect.StructTag(`cmd:"" name:"` + k.name + `"`)},
		}))
		return root.Interface(), root.Elem().Field(0).Addr().Interface().(*cli.Globals)
	}
	return nil, nil
}
