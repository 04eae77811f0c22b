package main

import (
	"testing"

	"github.com/leasewrap/leasewrap/cli"
	"github.com/leasewrap/leasewrap/internal/testutil/modeltest"
)

// TestModelDescription: leasewrap's completions and man pages take this
// executable's kinds, verbs and flags from its own description,
// cmd/leasewrap/siblings/leasewrap-pg.json. It fails when that file no
// longer matches this command line; LEASEWRAP_UPDATE_DOCS=1 (make
// gendocs) rewrites it. The shared run flags and the global flags are
// leasewrap's own: left out.
func TestModelDescription(t *testing.T) {
	if err := modeltest.CheckDescription(&rootCmd{}, "leasewrap-pg", description, version, "../../../cmd/leasewrap/siblings/leasewrap-pg.json", &cli.RunVerbShape{}); err != nil {
		t.Fatal(err)
	}
}
