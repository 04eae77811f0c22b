package main

import (
	"io"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestHelpListsEveryVerb checks that --help's command list names every
// verb of every kind in the table of kinds, sibling kinds included (kube
// run and kube holder were missing once).
func TestHelpListsEveryVerb(t *testing.T) {
	var out, errb strings.Builder
	if code := realMain([]string{"--help"}, &out, &errb); code != 0 {
		t.Fatalf("--help: want exit 0, have %d: %s", code, errb.String())
	}
	n := 0
	for _, k := range kinds {
		p, err := kong.New(&tree{}, k.command(), kong.Name("leasewrap"), kong.Vars{"version": version}, kong.Writers(io.Discard, io.Discard))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range p.Model.Children[0].Children {
			n++
			if !strings.Contains(out.String(), "  "+k.name+" "+v.Name+" ") {
				t.Errorf("--help does not list %s %s:\n%s", k.name, v.Name, out.String())
			}
		}
	}
	if n < 17 {
		t.Errorf("want every verb of every kind, have %d", n)
	}
	for _, want := range []string{"kube run", "kube holder", "lock holders", "once release", "help"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help does not name %q", want)
		}
	}
}

// TestHelpCommand: leasewrap help [KIND [VERB]] prints what --help does.
func TestHelpCommand(t *testing.T) {
	for _, tc := range []struct{ help, flags []string }{
		{[]string{"help"}, []string{"--help"}},
		{[]string{"help", "flock"}, []string{"flock", "--help"}},
		{[]string{"help", "flock", "run"}, []string{"flock", "run", "--help"}},
		{[]string{"-q", "help", "claim", "status"}, []string{"-q", "claim", "status", "--help"}},
		{[]string{"help", "session", "run"}, []string{"session", "run", "-h"}},
	} {
		var hout, herr, fout, ferr strings.Builder
		hcode := realMain(tc.help, &hout, &herr)
		fcode := realMain(tc.flags, &fout, &ferr)
		if hcode != 0 || fcode != 0 {
			t.Errorf("%q: want exit 0 (as %q), have %d and %d: %s%s", tc.help, tc.flags, hcode, fcode, herr.String(), ferr.String())
		}
		if hout.String() != fout.String() || !strings.HasPrefix(hout.String(), "Usage: leasewrap") {
			t.Errorf("%q: want the help %q prints\nwant %q\nhave %q", tc.help, tc.flags, fout.String(), hout.String())
		}
	}
}

// TestBareLeasewrapPrintsUsage: leasewrap with no command prints the whole
// usage on stderr and exits 64 (nothing ran), as flock(1) does, instead
// of kong's "expected one of …".
func TestBareLeasewrapPrintsUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"-q"}, {"--log-level", "debug"}} {
		var out, errb strings.Builder
		code := realMain(args, &out, &errb)
		if code != 64 {
			t.Errorf("%q: want exit 64, have %d", args, code)
		}
		if out.Len() != 0 {
			t.Errorf("%q: want nothing on stdout, have %q", args, out.String())
		}
		e := errb.String()
		if !strings.HasPrefix(e, "Usage: leasewrap") || !strings.Contains(e, "flock run") || !strings.Contains(e, "kube holder") || strings.Contains(e, "expected one of") {
			t.Errorf("%q: want the whole usage on stderr, have %q", args, e)
		}
	}
}
