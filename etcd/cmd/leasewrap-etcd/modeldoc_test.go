package main

import (
	"io"
	"os"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/leasewrap/leasewrap/internal/kongdoc"
)

// TestModelDescription: leasewrap's completions and man pages take this
// executable's kinds, verbs and flags from its own description,
// cmd/leasewrap/siblings/leasewrap-etcd.json in the root module. It fails when that
// file no longer matches this command line; LEASEWRAP_UPDATE_DOCS=1 (make
// gendocs) rewrites it.
func TestModelDescription(t *testing.T) {
	k, err := kong.New(&rootCmd{}, kong.Name("leasewrap-etcd"), kong.Description(description),
		kong.Vars{"version": version}, kong.Writers(io.Discard, io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	d := kongdoc.Describe(k.Model.Node)
	if err := kongdoc.Golden("../../../cmd/leasewrap/siblings/leasewrap-etcd.json", d.JSON(), os.Getenv("LEASEWRAP_UPDATE_DOCS") == "1", "make gendocs"); err != nil {
		t.Fatal(err)
	}
}
