// Package modeltest checks a sibling executable's command line against the
// description leasewrap's completions and man pages are built from. It is
// imported only by _test.go files.
package modeltest

import (
	"fmt"
	"io"
	"os"

	"github.com/alecthomas/kong"

	"github.com/leasewrap/leasewrap/internal/kongdoc"
)

// CheckDescription compares model's stripped description (kongdoc.Strip of
// the flags of shape's one verb) with the file at path; with
// $LEASEWRAP_UPDATE_DOCS=1 (make gendocs) it rewrites the file instead.
func CheckDescription(model any, name, description, version, path string, shape any) error {
	k, err := kong.New(model, kong.Name(name), kong.Description(description),
		kong.Vars{"version": version}, kong.Writers(io.Discard, io.Discard))
	if err != nil {
		return err
	}
	shared, err := kongdoc.VerbFlags(shape)
	if err != nil {
		return err
	}
	d := kongdoc.Describe(k.Model.Node)
	d.Strip(shared)
	want := d.JSON()
	if os.Getenv("LEASEWRAP_UPDATE_DOCS") == "1" {
		return os.WriteFile(path, want, 0o666)
	}
	have, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w (generate it: make gendocs)", err)
	}
	if string(have) != string(want) {
		return fmt.Errorf("%s is stale: the command line changed; regenerate it: make gendocs", path)
	}
	return nil
}
