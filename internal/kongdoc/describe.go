// Package kongdoc describes a kong command tree as data (Describe) and
// writes from it what must never drift from --help: man pages and bash, zsh
// and fish completions. Graft adds the sibling executables' kinds. It is off
// every run verb's path and has no package-level state.
package kongdoc

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kong"
)

// Node is a command: the program itself, a kind or a verb.
type Node struct {
	Name     string  `json:"name"`
	Help     string  `json:"help,omitempty"`
	Detail   string  `json:"detail,omitempty"`
	Group    string  `json:"group,omitempty"`
	Flags    []Flag  `json:"flags,omitempty"`
	Args     []Arg   `json:"args,omitempty"`
	Commands []*Node `json:"commands,omitempty"`
	// Shared: the verb also takes the flags every run verb shares, left
	// out of Flags in a sibling's description (Strip) and put back by Graft.
	Shared bool `json:"shared_flags,omitempty"`
}

// Flag is a flag of a command.
type Flag struct {
	Name        string   `json:"name"`
	Short       string   `json:"short,omitempty"`
	Aliases     []string `json:"aliases,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"` // empty: a boolean flag
	Help        string   `json:"help,omitempty"`
	Default     string   `json:"default,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Env         []string `json:"env,omitempty"`
	Negation    string   `json:"negation,omitempty"` // "no-subreaper" for --no-subreaper
}

// Arg is a positional argument.
type Arg struct {
	Name        string `json:"name"`
	Help        string `json:"help,omitempty"`
	Optional    bool   `json:"optional,omitempty"`
	Passthrough bool   `json:"passthrough,omitempty"` // the command after --
}

// Describe is the description of the tree under n (kong's model, after
// kong.New): every command, flag and argument that is not hidden.
func Describe(n *kong.Node) *Node {
	d := &Node{Name: n.Name, Help: n.Help, Detail: n.Detail}
	if n.Group != nil {
		d.Group = n.Group.Title
	}
	for _, f := range n.Flags {
		if f.Hidden {
			continue
		}
		df := Flag{Name: f.Name, Aliases: f.Aliases, Help: f.Help, Default: f.Default, Env: f.Envs}
		if f.Tag != nil && f.Tag.Negatable != "" {
			df.Negation = f.Tag.Negatable
			if df.Negation == "_" { // kong's default: --no-NAME
				df.Negation = "no-" + f.Name
			}
		}
		if f.Short != 0 {
			df.Short = string(f.Short)
		}
		if !f.IsBool() && !f.IsCounter() {
			df.Placeholder = f.PlaceHolder
			if df.Placeholder == "" {
				df.Placeholder = strings.ToUpper(f.Name)
			}
			if f.Enum != "" {
				df.Enum = f.EnumSlice()
			}
		}
		d.Flags = append(d.Flags, df)
	}
	for _, p := range n.Positional {
		d.Args = append(d.Args, Arg{Name: p.Name, Help: p.Help, Optional: !p.Required, Passthrough: p.Passthrough})
	}
	for _, c := range n.Children {
		if c.Hidden || c.Type != kong.CommandNode {
			continue
		}
		d.Commands = append(d.Commands, Describe(c))
	}
	return d
}

// Command is the child of n called name, or nil.
func (n *Node) Command(name string) *Node {
	for _, c := range n.Commands {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Graft replaces each of n's help-only stub commands with from's, keeping
// n's group and giving Shared verbs the shared flags back. It fails when the
// stubs and from's verbs disagree.
func (n *Node) Graft(from *Node, shared []Flag) error {
	for i, c := range n.Commands {
		real := from.Command(c.Name)
		if real == nil {
			continue
		}
		var stub, have []string
		for _, v := range c.Commands {
			stub = append(stub, v.Name)
		}
		for _, v := range real.Commands {
			have = append(have, v.Name)
		}
		if strings.Join(stub, " ") != strings.Join(have, " ") {
			return fmt.Errorf("kongdoc: %s lists the verbs %q, its executable has %q", c.Name, stub, have)
		}
		g := *real
		g.Group = c.Group
		g.Commands = nil
		for _, v := range real.Commands {
			w := *v
			if w.Shared {
				w.Flags = append(append([]Flag(nil), w.Flags...), shared...)
				w.Shared = false
			}
			g.Commands = append(g.Commands, &w)
		}
		n.Commands[i] = &g
	}
	return nil
}

// Strip leaves out of n the program's own flags and, marking the verb
// Shared, the shared flags of every verb that has all of them.
func (n *Node) Strip(shared []Flag) {
	n.Flags = nil
	names := map[string]bool{}
	for _, f := range shared {
		names[f.Name] = true
	}
	var strip func(c *Node)
	strip = func(c *Node) {
		have := 0
		for _, f := range c.Flags {
			if names[f.Name] {
				have++
			}
		}
		if len(names) > 0 && have == len(names) {
			var own []Flag
			for _, f := range c.Flags {
				if !names[f.Name] {
					own = append(own, f)
				}
			}
			c.Flags, c.Shared = own, true
		}
		for _, cc := range c.Commands {
			strip(cc)
		}
	}
	for _, c := range n.Commands {
		strip(c)
	}
}

// VerbFlags are the flags of the one verb of shape, a kong root struct
// with a single command (cli.RunVerbShape: the shared run flags).
func VerbFlags(shape any) ([]Flag, error) {
	k, err := kong.New(shape, kong.Writers(io.Discard, io.Discard))
	if err != nil {
		return nil, err
	}
	d := Describe(k.Model.Node)
	if len(d.Commands) != 1 {
		return nil, fmt.Errorf("kongdoc: want a shape of one verb, have %d", len(d.Commands))
	}
	return d.Commands[0].Flags, nil
}

// Read reads a description written by Write.
func Read(data []byte) (*Node, error) {
	var n Node
	if err := json.Unmarshal(data, &n); err != nil {
		return nil, fmt.Errorf("kongdoc: %w", err)
	}
	return &n, nil
}

// JSON is n as written to a file: indented, with a final newline.
func (n *Node) JSON() []byte {
	b, err := json.MarshalIndent(n, "", "  ")
	if err != nil {
		panic(err) // strings, bools and slices of them only
	}
	return append(b, '\n')
}

// flagWords are the words that spell f on a command line.
func (f Flag) flagWords() []string {
	w := []string{"--" + f.Name}
	for _, a := range f.Aliases {
		w = append(w, "--"+a)
	}
	if f.Negation != "" {
		w = append(w, "--"+f.Negation)
	}
	if f.Short != "" {
		w = append(w, "-"+f.Short)
	}
	return w
}
