package main

import (
	"io"
	"testing"

	"github.com/alecthomas/kong"
)

// BenchmarkStartupVersion is leasewrap's work for `--version` after the Go
// runtime started: building the whole CLI model and parsing.
func BenchmarkStartupVersion(b *testing.B) {
	for b.Loop() {
		realMain([]string{"--version"}, io.Discard, io.Discard)
	}
}

// BenchmarkCLIModel is the cost of building and using the kong model that
// a run verb parses with: the whole tree, or the one kind it names.
func BenchmarkCLIModel(b *testing.B) {
	args := []string{"claim", "run", "build:nightly", "--root", "/srv", "--ttl", "5m", "--", "true"}
	for _, tc := range []struct {
		name  string
		model func() (any, []kong.Option)
	}{
		{"whole-tree", func() (any, []kong.Option) { return &tree{}, treeCommands() }},
		{"one-verb", func() (any, []kong.Option) { m, _, opts := model(args); return m, opts }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				m, opts := tc.model()
				p, err := kong.New(m, append(opts, kong.Name("leasewrap"), kong.Vars{"version": version}, kong.Writers(io.Discard, io.Discard))...)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.Parse(args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
