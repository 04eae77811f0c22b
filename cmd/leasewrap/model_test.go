package main

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/leasewrap/leasewrap/cli"
)

// TestEveryVerbHasItsOwnModel checks that each verb of the whole tree has a
// one-verb model, that model() picks it for "KIND VERB …", and that the
// one-verb model holds exactly that verb with the same flags and arguments
// as in the whole tree.
func TestEveryVerbHasItsOwnModel(t *testing.T) {
	whole, err := kong.New(&tree{}, append(treeCommands(), kong.Name("leasewrap"), kong.Vars{"version": version}, kong.Writers(io.Discard, io.Discard))...)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, kind := range whole.Model.Children {
		if k := kindNamed(kind.Name); k == nil || k.sibling != nil {
			continue // help only (main executes the sibling for them before kong runs), or help itself
		}
		for _, verb := range kind.Children {
			n++
			args := []string{"--log-level", "warn", kind.Name, "-q", verb.Name}
			m, g, opts := model(args)
			if !isHelpless(m) {
				t.Errorf("%s %s: no one-verb model (have %T)", kind.Name, verb.Name, m)
				continue
			}
			if g == nil {
				t.Fatalf("%s %s: no cli.Globals", kind.Name, verb.Name)
			}
			p, err := kong.New(m, append(opts, kong.Name("leasewrap"), kong.Vars{"version": version}, kong.Writers(io.Discard, io.Discard))...)
			if err != nil {
				t.Fatalf("%s %s: %v", kind.Name, verb.Name, err)
			}
			if len(p.Model.Children) != 1 || len(p.Model.Children[0].Children) != 1 {
				t.Fatalf("%s %s: want a tree of one verb, have %d kinds", kind.Name, verb.Name, len(p.Model.Children))
			}
			one := p.Model.Children[0].Children[0]
			if p.Model.Children[0].Name != kind.Name || one.Name != verb.Name {
				t.Errorf("want %s %s, have %s %s", kind.Name, verb.Name, p.Model.Children[0].Name, one.Name)
			}
			if have, want := describe(one), describe(verb); have != want {
				t.Errorf("%s %s: flags and arguments differ\nwant %s\nhave %s", kind.Name, verb.Name, want, have)
			}
		}
	}
	if n < 10 {
		t.Fatalf("want every verb checked, have %d", n)
	}
}

func describe(n *kong.Node) string {
	var b strings.Builder
	for _, f := range n.Flags {
		b.WriteString("--" + f.Name + "=" + f.Default + ";")
	}
	for _, p := range n.Positional {
		b.WriteString(p.Name + ";")
	}
	return b.String()
}

// TestModelKeepsTheWholeTreeForHelp checks that help and unknown words are
// answered from the whole tree, never a cut-down one.
func TestModelKeepsTheWholeTreeForHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want any
	}{
		{[]string{"--help"}, &tree{}},
		{[]string{"--version", "--help"}, &tree{}},
		{[]string{"--version"}, &versionCLI{}},
		{[]string{"claim", "run", "--help"}, &tree{}},
		{[]string{"claim", "run", "k", "--", "x", "--help"}, nil}, // the child's --help is not ours
		{[]string{"claim", "nosuchverb"}, &tree{}},
		{[]string{"claim", "--help"}, &tree{}},
		{[]string{"nosuchkind", "run"}, &tree{}},
		{[]string{}, &tree{}},
	} {
		m, _, _ := model(tc.args)
		if tc.want == nil {
			if !isHelpless(m) {
				t.Errorf("%q: want the one-verb model, have %T", tc.args, m)
			}
			continue
		}
		if reflect.TypeOf(m) != reflect.TypeOf(tc.want) {
			t.Errorf("%q: want %T, have %T", tc.args, tc.want, m)
		}
	}
}

// TestHelpNeverComesFromAHelplessModel checks that the models kong gets no
// description for (helpless) are never the ones a help request parses
// with, and that the lean paths still use them.
func TestHelpNeverComesFromAHelplessModel(t *testing.T) {
	for _, args := range [][]string{
		{"--help"}, {"-h"}, {"--version", "--help"}, {"-h", "--version"},
		{"claim", "run", "--help"}, {"claim", "run", "k", "-h", "--", "true"},
		{"-q", "reserve", "hash", "--help"}, {"session", "--help"},
	} {
		if m, _, _ := model(args); isHelpless(m) {
			t.Errorf("%q: help would be printed by a model without the description (%T)", args, m)
		}
	}
	for _, args := range [][]string{
		{"--version"}, {"claim", "run", "k", "--", "true", "--help"}, {"reserve", "hash", "k"},
	} {
		if m, _, _ := model(args); !isHelpless(m) {
			t.Errorf("%q: want a lean model, have %T", args, m)
		}
	}
}

func isHelpless(m any) bool {
	_, whole := m.(*tree)
	return !whole
}

// TestHelplessModelsRefuseLikeTheTree checks that a command line refused
// by a lean model (one verb or --version, whose help strings withoutHelp
// empties) gets the same exit code and the same message as from the whole
// tree with its help: kong's errors must not depend on the help text.
func TestHelplessModelsRefuseLikeTheTree(t *testing.T) {
	root := t.TempDir()
	for _, args := range [][]string{
		{"claim", "run", "--nosuch", "k", "--", "true"},
		{"claim", "run", "--ttl", "soon", "k", "--", "true"},
		{"claim", "run", "--root", root},
		{"claim", "run", "k", "--root", root},
		{"claim", "run", "k", "--root", root, "--ttl", "30s", "--kill-grace", "1m", "--", "true"},
		{"claim", "run", "k", "--anchor", "glue", "--root", root, "--", "true"},
		{"claim", "status", "k", "--root"},
		{"--log-format", "bogus", "claim", "status", "k", "--root", root},
		{"reserve", "hash"},
		{"reserve", "hash", "a", "b"},
		{"reserve", "run", "k", "--root", root, "--", "true", "--conflict-exit-code", "x"},
		{"session", "run", "sid", "--epoch", "x", "--root", root, "--", "true"},
		{"session", "owners"},
		{"claim", "renew", "k", "--root", root},
		{"claim", "acquire", "k", "--root", root, "--ttl-ms", "x"},
		{"flock", "run"},
		{"flock", "run", "--wait", "-1", root + "/f", "--", "true"},
		{"--version", "--bogus"},
		{"--log-level", "loud", "--version"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if m, _, _ := model(args); !isHelpless(m) {
				t.Fatalf("want a lean model, have %T", m)
			}
			var leanOut, leanErr, treeOut, treeErr strings.Builder
			leanCode := realMain(args, &leanOut, &leanErr)
			c := &tree{}
			treeCode := cli.Main(c, &c.Globals, description, cli.VersionLine("leasewrap", version, args), args, &treeOut, &treeErr, treeCommands()...)
			if leanCode != treeCode {
				t.Errorf("exit code: want %d (whole tree), have %d", treeCode, leanCode)
			}
			if have, want := withoutTimes(leanErr.String()), withoutTimes(treeErr.String()); have != want {
				t.Errorf("stderr differs from the whole tree's\nwant %q\nhave %q", want, have)
			}
			if leanOut.String() != treeOut.String() {
				t.Errorf("stdout: want %q, have %q", treeOut.String(), leanOut.String())
			}
			if leanErr.Len()+leanOut.Len() == 0 {
				t.Error("nothing written: want an error line (or the version)")
			}
		})
	}
}

// withoutTimes drops the timestamp that starts each text log line.
func withoutTimes(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if _, rest, ok := strings.Cut(l, " "); ok {
			lines[i] = rest
		}
	}
	return strings.Join(lines, "\n")
}

// TestWithoutHelpEmptiesEveryHelp checks that every lean model reaches
// kong's interpolation with no help text left, and that what errors use
// (names, placeholders, defaults, enums, environment variables) is the
// same as without withoutHelp.
func TestWithoutHelpEmptiesEveryHelp(t *testing.T) {
	argss := [][]string{{"--version"}}
	for _, k := range kinds {
		if k.sibling != nil {
			continue
		}
		kt := reflect.TypeOf(k.cmd()).Elem()
		for i := range kt.NumField() {
			argss = append(argss, []string{k.name, strings.ToLower(kt.Field(i).Name)})
		}
	}
	for _, args := range argss {
		m, _, opts := model(args)
		if !isHelpless(m) {
			t.Fatalf("%q: want a lean model, have %T", args, m)
		}
		lean, lhelp := summary(t, m, append(opts, kong.PostBuild(withoutHelp))...)
		m, _, opts = model(args)
		full, fhelp := summary(t, m, opts...)
		if lhelp != "" || fhelp == "" {
			t.Errorf("%q: want no help left (and some without withoutHelp), have %q (%d bytes without)", args, lhelp, len(fhelp))
		}
		if lean != full {
			t.Errorf("%q: want the same values as with help\nwant %s\nhave %s", args, full, lean)
		}
	}
}

// summary is what kong's errors can use of model's values, and all its
// help text.
func summary(t *testing.T, model any, opts ...kong.Option) (values, help string) {
	t.Helper()
	p, err := kong.New(model, append([]kong.Option{kong.Name("leasewrap"), kong.Vars{"version": version}, kong.Writers(io.Discard, io.Discard)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	var v, h strings.Builder
	err = kong.Visit(p.Model.Node, func(n kong.Visitable, next kong.Next) error {
		switch n := n.(type) {
		case *kong.Node:
			h.WriteString(n.Help + n.Detail)
			v.WriteString(n.Path() + ";")
		case *kong.Value:
			h.WriteString(n.Help)
			fmt.Fprintf(&v, "%s %q %q %q %v %v", n.Summary(), n.Default, n.Enum, n.Tag.Envs, n.Required, n.Position)
			if n.Flag != nil {
				fmt.Fprintf(&v, " %q %q %q", n.Flag.PlaceHolder, n.Flag.Short, n.Flag.Envs)
			}
			v.WriteString(";")
		}
		return next(nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	return v.String(), h.String()
}
