package cli

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alecthomas/kong"
)

type suggestCLI struct {
	Quiet bool `short:"q"`
	Flock struct {
		Run struct {
			NonBlock bool          `short:"n"`
			Wait     time.Duration `name:"wait"`
			Path     string        `arg:""`
			Command  []string      `arg:"" passthrough:""`
		} `cmd:""`
	} `cmd:""`
	Admin struct {
		Status struct {
			Key string `arg:""`
		} `cmd:""`
	} `cmd:""`
}

// TestSuggest: the line Suggest spells out for a refused command line,
// and where it does not guess.
func TestSuggest(t *testing.T) {
	p, err := kong.New(&suggestCLI{}, kong.Writers(io.Discard, io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args string
		want string
	}{
		{"flock f -- true", "leasewrap flock run f -- true"},
		{"flock -n f true", "leasewrap flock run -n f -- true"},
		{"flock -n f echo -n hi", "leasewrap flock run -n f -- echo -n hi"}, // the command's flags stay its own
		{"flock f cmd -- x", "leasewrap flock run f -- cmd -- x"},
		{"-q flock --wait 5s f -- true", "leasewrap -q flock run --wait 5s f -- true"},
		{"--wiat 5s flock run f -- true", "leasewrap flock run --wait 5s f -- true"},
		{"flock run f --wiat=5s -- true", "leasewrap flock run f --wait=5s -- true"},
		{"flock f", "leasewrap flock run f -- CMD"},
		{"flock rn f -- true", ""},           // a mistyped verb: kong's guess
		{"flock --frobnicate f -- true", ""}, // a flag close to none
		{"admin k", ""},                      // a kind without a run verb
		{"flok run f -- true", ""},           // no kind
		{"flock run f -- true", ""},          // nothing to change
	} {
		if have := Suggest(p.Model.Node, strings.Fields(tc.args)); have != tc.want {
			t.Errorf("%s: want %q, have %q", tc.args, tc.want, have)
		}
	}
	if have, want := Suggest(p.Model.Node, []string{"flock", "f", "echo", "a b", "it's"}), `leasewrap flock run f -- echo 'a b' 'it'\''s'`; have != want {
		t.Errorf("quoting: want %s, have %s", want, have)
	}
}

// TestExplainPermission: a permission refused on a path names the
// directory that refused it and what to do; other errors are unchanged.
func TestExplainPermission(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".fno")
	err := explainPermission(&fs.PathError{Op: "mkdir", Path: path, Err: syscall.EACCES})
	for _, w := range []string{"mkdir " + path + ": permission denied; directory " + dir + " (owner uid ", "is not writable by uid", "or create " + path + " first"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("want %q in %q", w, err)
		}
	}
	if !errors.Is(err, fs.ErrPermission) {
		t.Errorf("want the cause kept, have %v", err)
	}
	other := &fs.PathError{Op: "open", Path: path, Err: syscall.ENOENT}
	if have := explainPermission(other); have != error(other) {
		t.Errorf("want %v unchanged, have %v", other, have)
	}
}

// TestCommandAt: where a verb's command starts, as kong reads the line.
func TestCommandAt(t *testing.T) {
	p, err := kong.New(&suggestCLI{}, kong.Writers(io.Discard, io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   string
		keys   string
		at     int
		valued []string
	}{
		{"flock run --wait 5s f sh -c x", "f", 5, nil},
		{"flock --wait 5s -n f sh -c x", "f", 5, nil}, // run left out
		{"flock run f -c x", "f", 4, nil},             // -c unknown: no value
		{"flock run -c x f sh", "f", 5, []string{"-c"}},
		{"flock run f -- sh", "f", 4, nil},
		{"flock run f", "f", 3, nil},
		{"admin status k", "k", 3, nil},
		{"nokind run f", "", -1, nil},
	} {
		keys, at := CommandAt(p.Model.Node, strings.Fields(tc.args), tc.valued...)
		if strings.Join(keys, " ") != tc.keys || at != tc.at {
			t.Errorf("%s: want %q at %d, have %q at %d", tc.args, tc.keys, tc.at, keys, at)
		}
	}
}
