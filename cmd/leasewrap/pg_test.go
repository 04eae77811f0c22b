package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/cli"
)

// TestPgKindIsASibling: `leasewrap pg …` is served by leasewrap-pg, and
// leasewrap itself links nothing of the PostgreSQL driver.
func TestPgKindIsASibling(t *testing.T) {
	for _, args := range [][]string{{"pg", "run", "x"}, {"-q", "pg", "holder", "x"}, {"pg", "once", "k"}} {
		k := kindNamed(cli.ScanArgs(args).Kind())
		if k == nil || k.sibling == nil || k.sibling.exe != "leasewrap-pg" {
			t.Errorf("%q: want leasewrap-pg to serve it, have %+v", args, k)
		}
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "github.com/leasewrap/leasewrap/cmd/leasewrap").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/jackc/") || strings.HasPrefix(p, "github.com/leasewrap/leasewrap/pg/") {
			t.Errorf("leasewrap links %s: the pg kind belongs to leasewrap-pg", p)
		}
	}
}
