package main

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestEveryVerbHasItsOwnModel checks that each verb of the whole tree has a
// one-verb model, that model() picks it for "KIND VERB …", and that the
// one-verb model holds exactly that verb with the same flags and arguments
// as in the whole tree.
func TestEveryVerbHasItsOwnModel(t *testing.T) {
	whole, err := kong.New(&tree{}, kong.Name("leasewrap"), kong.Vars{"version": version}, kong.Writers(io.Discard, io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, kind := range whole.Model.Children {
		if kind.Name == "lock" || kind.Name == "once" {
			continue // help only: main executes leasewrap-etcd for them before kong runs
		}
		for _, verb := range kind.Children {
			n++
			args := []string{"--log-level", "warn", kind.Name, "-q", verb.Name}
			m, g := model(args)
			if _, ok := verbModels[kind.Name][verb.Name]; !ok {
				t.Errorf("%s %s: no one-verb model in verbModels", kind.Name, verb.Name)
				continue
			}
			if g == nil {
				t.Fatalf("%s %s: no cli.Globals", kind.Name, verb.Name)
			}
			p, err := kong.New(m, kong.Name("leasewrap"), kong.Vars{"version": version}, kong.Writers(io.Discard, io.Discard))
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
// answered from the whole tree or the kind's tree, never a cut-down one.
func TestModelKeepsTheWholeTreeForHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want any
	}{
		{[]string{"--help"}, &tree{}},
		{[]string{"--version", "--help"}, &tree{}},
		{[]string{"--version"}, &versionCLI{}},
		{[]string{"claim", "run", "--help"}, &claimCLI{}},
		{[]string{"claim", "run", "k", "--", "x", "--help"}, nil}, // the child's --help is not ours
		{[]string{"claim", "nosuchverb"}, &claimCLI{}},
		{[]string{"nosuchkind", "run"}, &tree{}},
		{[]string{}, &tree{}},
	} {
		m, _ := model(tc.args)
		if tc.want == nil {
			if reflect.TypeOf(m) == reflect.TypeOf(&claimCLI{}) {
				t.Errorf("%q: want the one-verb model, have the kind's", tc.args)
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
		if m, _ := model(args); isHelpless(m) {
			t.Errorf("%q: help would be printed by a model without the description (%T)", args, m)
		}
	}
	for _, args := range [][]string{
		{"--version"}, {"claim", "run", "k", "--", "true", "--help"}, {"reserve", "hash", "k"},
	} {
		if m, _ := model(args); !isHelpless(m) {
			t.Errorf("%q: want a lean model, have %T", args, m)
		}
	}
}

func isHelpless(m any) bool {
	_, ok := m.(helpless)
	return ok
}
