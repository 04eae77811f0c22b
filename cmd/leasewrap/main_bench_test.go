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
		model func() any
	}{
		{"whole-tree", func() any { return &tree{} }},
		{"one-verb", func() any { m, _ := model(args); return m }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				p, err := kong.New(tc.model(), kong.Name("leasewrap"), kong.Vars{"version": version}, kong.Writers(io.Discard, io.Discard))
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
