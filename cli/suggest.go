package cli

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/kong"
)

// Suggest is the command line a user most likely meant when kong refused
// args (verb left out, flock(1)'s order, a flag before its verb, a mistyped
// flag, no "--"), or "" when there is no single such line. It only moves,
// inserts and corrects words.
func Suggest(root *kong.Node, args []string) string {
	l, ok := readLine(root, args)
	if !ok || len(l.verb.Children) > 0 {
		return ""
	}
	end, kindAt, verbAt, kind, verb := l.end, l.kindAt, l.verbAt, l.kind, l.verb
	passthrough := slices.ContainsFunc(verb.Positional, func(p *kong.Positional) bool { return p.PassthroughMode != kong.PassThroughModeNone })
	flags := flagTable(verb)
	var pre, body, command []string
	nkeys, commandGiven := 0, end < len(args)
	if commandGiven {
		command = args[end+1:]
	}
	for i := 0; i < end; i++ {
		w := args[i]
		if i == kindAt || i == verbAt {
			continue
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			switch {
			case nkeys == 0 && verbAt < 0 && near(w, names(kind)):
				return "" // a mistyped verb: kong's own suggestion stands
			case i < kindAt:
				return ""
			case nkeys < l.keys:
				body = append(body, w)
				nkeys++
				continue
			case !passthrough:
				return ""
			}
			// The command, in flock(1)'s order: all that follows is its.
			command, commandGiven = args[i:], true
			break
		}
		name, value, hasValue := strings.Cut(w, "=")
		f, ok := flags[name]
		if !ok {
			fixed := closest(name, keys(flags))
			if fixed == "" {
				return ""
			}
			name, f = fixed, flags[fixed]
		}
		words := []string{name}
		if hasValue {
			words[0] += "=" + value
		} else if takesValue(f, name) && i+1 < end {
			i++
			words = append(words, args[i])
		}
		if i < kindAt && isGlobal(root, f) {
			pre = append(pre, words...)
		} else {
			body = append(body, words...)
		}
	}
	out := []string{"leasewrap"}
	out = append(out, pre...)
	out = append(out, kind.Name, verb.Name)
	out = append(out, body...)
	if passthrough {
		if !commandGiven || len(command) == 0 {
			command = []string{"CMD"} // a run verb refuses no command
		}
		out = append(out, "--")
		out = append(out, command...)
	}
	if slices.Equal(out[1:], args) {
		return ""
	}
	for i, w := range out {
		out[i] = ShellQuote(w)
	}
	return strings.Join(out, " ")
}

// line is where a command line names its kind and verb: end is the index
// of "--" (len(args) if none), the kind the first word naming one, the verb
// the first word after it naming one of the kind's verbs (verbAt -1 when
// left out, and the verb is run), keys how many arguments it takes before
// its command.
type line struct {
	end, kindAt, verbAt int
	kind, verb          *kong.Node
	keys                int
}

// readLine reads args' kind and verb; false when they name none.
func readLine(root *kong.Node, args []string) (line, bool) {
	l := line{end: slices.Index(args, "--"), verbAt: -1}
	if l.end < 0 {
		l.end = len(args)
	}
	l.kindAt = slices.IndexFunc(args[:l.end], func(w string) bool { return child(root, w) != nil })
	if l.kindAt < 0 {
		return l, false
	}
	l.kind = child(root, args[l.kindAt])
	l.verb = child(l.kind, "run")
	for i := l.kindAt + 1; i < l.end; i++ {
		if v := child(l.kind, args[i]); v != nil {
			l.verb, l.verbAt = v, i
			break
		}
	}
	if l.verb == nil {
		return l, false
	}
	for _, p := range l.verb.Positional {
		if p.PassthroughMode == kong.PassThroughModeNone {
			l.keys++
		}
	}
	return l, true
}

// child is n's subcommand called name, or nil.
func child(n *kong.Node, name string) *kong.Node {
	for _, c := range n.Children {
		if c.Type == kong.CommandNode && c.Name == name {
			return c
		}
	}
	return nil
}

func names(n *kong.Node) []string {
	var out []string
	for _, c := range n.Children {
		out = append(out, c.Name)
	}
	return out
}

// flagTable maps each spelling of a flag of n and its ancestors ("--wait",
// "-n", "--no-subreaper") to the flag.
func flagTable(n *kong.Node) map[string]*kong.Flag {
	t := map[string]*kong.Flag{}
	for ; n != nil; n = n.Parent {
		for _, f := range n.Flags {
			t["--"+f.Name] = f
			if f.Short != 0 {
				t["-"+string(f.Short)] = f
			}
			for _, a := range f.Aliases {
				if utf8.RuneCountInString(a) == 1 {
					t["-"+a] = f
				} else {
					t["--"+a] = f
				}
			}
			if f.Tag.Negatable != "" {
				t["--no-"+f.Name] = f
			}
		}
	}
	return t
}

func keys(m map[string]*kong.Flag) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// takesValue tells whether flag, spelt name, takes the next word as its value.
func takesValue(f *kong.Flag, name string) bool {
	return !f.IsBool() && !f.IsCounter() && !strings.HasPrefix(name, "--no-")
}

func isGlobal(root *kong.Node, f *kong.Flag) bool { return slices.Contains(root.Flags, f) }

// closest is the one candidate within two edits of word (a typo), or "".
func closest(word string, candidates []string) string {
	best := ""
	for _, c := range candidates {
		if len(c) > 2 && levenshtein(word, c) <= 2 {
			if best != "" {
				return ""
			}
			best = c
		}
	}
	return best
}

// near tells whether word is a typo or a prefix of one of candidates.
func near(word string, candidates []string) bool {
	for _, c := range candidates {
		if strings.HasPrefix(c, word) || levenshtein(word, c) <= 2 {
			return true
		}
	}
	return false
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}

// ShellQuote quotes w for a POSIX shell when it needs quoting.
func ShellQuote(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// CommandAt reads args as kong would for their kind's verb (run if left
// out): the verb's keys and the index of the command's first word
// (len(args) if none, -1 if args name no such verb). An unknown flag takes
// no value unless it is one of valued.
func CommandAt(root *kong.Node, args []string, valued ...string) (keys []string, at int) {
	l, ok := readLine(root, args)
	if !ok {
		return nil, -1
	}
	end, kindAt, verbAt := l.end, l.kindAt, l.verbAt
	flags := flagTable(l.verb)
	for i := kindAt + 1; i < end; i++ {
		w := args[i]
		switch {
		case i == verbAt:
		case strings.HasPrefix(w, "-") && w != "-":
			name, _, hasValue := strings.Cut(w, "=")
			f, known := flags[name]
			if !hasValue && (known && takesValue(f, name) || !known && slices.Contains(valued, name)) {
				i++
			}
		case len(keys) < l.keys:
			keys = append(keys, w)
		default:
			return keys, i
		}
	}
	if end < len(args) {
		return keys, end + 1
	}
	return keys, len(args)
}
