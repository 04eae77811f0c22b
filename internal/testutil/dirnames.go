package testutil

import (
	"os"
	"testing"
)

// DirNames lists the names in dir (directory order), failing the test
// when it cannot be read: what a crash or a race left behind.
func DirNames(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}
