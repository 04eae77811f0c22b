package kongdoc

import (
	"fmt"
	"strings"
)

// entry is what the scripts know of one command path ("" is the program).
type entry struct {
	path  string
	cmds  []*Node
	flags []Flag // its own and its parents'
}

// table lists every command path of root, the program first. Each
// completion script walks the words before the cursor (sub-commands descend,
// a valued flag skips a word, "--" starts the wrapped command) and then
// offers the wrapped command's completion, a flag's values, the flags valid
// there, or the sub-commands or file names.
func table(root *Node) []entry {
	var out []entry
	var walk func(path string, n *Node, inherited []Flag)
	walk = func(path string, n *Node, inherited []Flag) {
		fs := append(append([]Flag(nil), n.Flags...), inherited...)
		out = append(out, entry{path: path, cmds: n.Commands, flags: fs})
		for _, c := range n.Commands {
			p := c.Name
			if path != "" {
				p = path + " " + c.Name
			}
			walk(p, c, fs)
		}
	}
	walk("", root, nil)
	return out
}

// valued are the words of e's flags that take a value.
func (e entry) valued() []string {
	var w []string
	for _, f := range e.flags {
		if f.Placeholder != "" {
			w = append(w, f.flagWords()...)
		}
	}
	return w
}

// enums are e's flags that take one of a set of values.
func (e entry) enums() []Flag {
	var fs []Flag
	for _, f := range e.flags {
		if len(f.Enum) > 0 {
			fs = append(fs, f)
		}
	}
	return fs
}

// flagWordsOf are the words of every flag of e.
func (e entry) flagWordsOf() []string {
	var w []string
	for _, f := range e.flags {
		w = append(w, f.flagWords()...)
	}
	return w
}

func (e entry) cmdNames() []string {
	var w []string
	for _, c := range e.cmds {
		w = append(w, c.Name)
	}
	return w
}

// sq quotes s for sh, bash, zsh and fish alike: single quotes, each ' as '\”.
// (fish reads '\” inside single quotes as a quote too.)
func sq(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// oneLine is help as one short line for a completion menu.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i+1]
	}
	return s
}

// valueFunc writes the sh function FN_value PATH FLAG (bash and zsh): it
// fails unless FLAG takes a value at PATH, and sets the reply (reset
// first) to its enum's values, given by enum.
func valueFunc(b *strings.Builder, root *Node, fn, reset string, enum func(Flag) string) {
	fmt.Fprintf(b, "%s_value() {\n\t%s\n\tcase $1 in\n", fn, reset)
	for _, e := range table(root) {
		v := e.valued()
		if len(v) == 0 {
			continue
		}
		fmt.Fprintf(b, "\t%s)\n\t\tcase $2 in\n", sq(e.path))
		for _, f := range e.enums() {
			fmt.Fprintf(b, "\t\t%s) %s ;;\n", strings.Join(f.flagWords(), "|"), enum(f))
		}
		fmt.Fprintf(b, "\t\t%s) ;;\n\t\t*) return 1 ;;\n\t\tesac ;;\n", strings.Join(v, "|"))
	}
	b.WriteString("\t*) return 1 ;;\n\tesac\n}\n\n")
}
