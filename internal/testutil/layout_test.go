package testutil

import (
	"os/exec"
	"strings"
	"testing"
)

// internal/ is the ground floor: none of its packages (tests included)
// imports the product above it. This asks the go tool, as a reviewer would
// with `go list -deps`.
func TestGroundFloorImportsNothingAbove(t *testing.T) {
	const module = "github.com/leasewrap/leasewrap/"
	out, err := exec.Command("go", "list", "-test", "-deps", "-f", "{{.ImportPath}}", module+"internal/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		rest, ok := strings.CutPrefix(p, module)
		if !ok || strings.HasPrefix(rest, "internal/") {
			continue
		}
		t.Errorf("a package under internal/ depends on %s: internal/ may import only the standard library, third-party modules and itself", p)
	}
}
