package cli

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/alecthomas/kong"
)

// verbLine is what Check needs of the raw command line to explain a
// mistake in the verb's own words (kept by BeforeApply).
type verbLine struct {
	verb     string   // "claim run"
	keyName  string   // "KEY", "NAME", "ID"
	dashDash int      // how many "--" were given
	afterDD  []string // the words after the first "--"
	root     *kong.Node
	args     []string // the whole command line, for Suggest
}

// BeforeApply is a kong hook of every run verb: it keeps the verb's name,
// its key's name and whether "--" was given, for Check.
func (f *RunFlags) BeforeApply(kctx *kong.Context) error {
	n := kctx.Selected()
	f.line.verb = verbPath(kctx)
	f.line.root, f.line.args = kctx.Model.Node, kctx.Args
	if n != nil {
		for _, p := range n.Positional {
			if p.Name != "command" {
				f.line.keyName = strings.ToUpper(p.Name)
				break
			}
		}
	}
	for _, p := range kctx.Path {
		if p.Flag != nil && p.Flag.Name == "kill-grace" {
			f.graceGiven = true
		}
	}
	if i := slices.Index(kctx.Args, "--"); i >= 0 {
		f.line.afterDD = kctx.Args[i+1:]
		f.line.dashDash = count(kctx.Args, "--")
	}
	// Values are parsed but not applied yet: report this before the verb's
	// Validate judges the command's first word as its key.
	if n != nil {
		for _, p := range n.Positional {
			if p.Name == "command" {
				var argv []string // none when nothing was left for it
				if v := kctx.Value(&kong.Path{Positional: p}); v.IsValid() && v.Kind() == reflect.Slice {
					argv, _ = v.Interface().([]string)
				}
				return f.line.missingKey(argv)
			}
		}
	}
	return nil
}

// example is the verb's usage for messages: "leasewrap claim run KEY".
func (l verbLine) example() string {
	v, k := l.verb, l.keyName
	if v == "" {
		v = "VERB"
	}
	if k == "" {
		k = "KEY"
	}
	return "leasewrap " + v + " " + k
}

// missingKey is the mistake of a "--" before the verb's key: kong would
// take the command's first word as the key and run the wrong program.
func (l verbLine) missingKey(command []string) error {
	// kong leaves the "--" in the command when the command is next; it
	// consumes it when a key is still missing.
	if l.dashDash == 0 || count(command, "--") >= l.dashDash {
		return nil
	}
	k := l.keyName
	if k == "" {
		k = "KEY"
	}
	cmd := strings.Join(l.afterDD, " ")
	if cmd == "" {
		cmd = "./job.sh"
	}
	return fmt.Errorf("%s: %w: %s is missing: everything after -- is the command (%s); give %s before --, e.g. %s [flags] -- %s",
		l.verb, ErrUsage, k, cmd, k, l.example(), cmd)
}

func count(words []string, w string) int {
	n := 0
	for _, x := range words {
		if x == w {
			n++
		}
	}
	return n
}

// verbPath is the verb kctx selected, "claim run"; "" for none.
func verbPath(kctx *kong.Context) string {
	if kctx == nil {
		return ""
	}
	var words []string
	for p := kctx.Selected(); p != nil && p.Type == kong.CommandNode; p = p.Parent {
		words = append([]string{p.Name}, words...)
	}
	return strings.Join(words, " ")
}
