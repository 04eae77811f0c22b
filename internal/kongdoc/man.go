package kongdoc

import (
	"fmt"
	"sort"
	"strings"
)

// Man returns root's man pages by file name: NAME.1 and NAME-KIND.1 for
// each command with verbs. No date or version: the output is reproducible.
func Man(root *Node, name string) map[string][]byte {
	pages := map[string][]byte{name + ".1": manRoot(root, name)}
	for _, k := range root.Commands {
		if len(k.Commands) > 0 {
			pages[name+"-"+k.Name+".1"] = manKind(root, k, name)
		}
	}
	return pages
}

func manRoot(root *Node, name string) []byte {
	var b strings.Builder
	title, rest, _ := strings.Cut(root.Help, "\n")
	th(&b, name, name)
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roff(name), roff(strings.TrimSuffix(strings.TrimSpace(title), ".")))
	b.WriteString(".SH SYNOPSIS\n")
	fmt.Fprintf(&b, ".B %s\n[\\fIGLOBAL FLAGS\\fR] \\fIKIND\\fR \\fIVERB\\fR [\\fIFLAGS\\fR] [\\fIARGS\\fR] [\\fB\\-\\-\\fR \\fICOMMAND\\fR [\\fIARG\\fR...]]\n", roff(name))
	for _, c := range root.Commands {
		if len(c.Commands) == 0 {
			fmt.Fprintf(&b, ".br\n.B %s %s\n%s\n", roff(name), roff(c.Name), synopsisArgs(c))
		}
	}
	b.WriteString(".SH DESCRIPTION\n")
	text(&b, strings.TrimSpace(rest))
	b.WriteString(".SH COMMANDS\n")
	group := ""
	for _, k := range root.Commands {
		if k.Group != group {
			group = k.Group
			title := group
			if title == "" {
				title = "Other commands"
			}
			fmt.Fprintf(&b, ".SS %s\n", quoted(title))
		}
		if len(k.Commands) == 0 {
			fmt.Fprintf(&b, ".TP\n.B %s %s\n%s\n", roff(name), roff(k.Name), roff(k.Help))
			continue
		}
		for _, v := range k.Commands {
			fmt.Fprintf(&b, ".TP\n.B %s %s %s\n%s See \\fB%s\\fR(1).\n", roff(name), roff(k.Name), roff(v.Name), roff(v.Help), roff(name+"-"+k.Name))
		}
	}
	b.WriteString(".SH OPTIONS\n")
	flags(&b, root.Flags)
	b.WriteString(".SH \"SEE ALSO\"\n")
	var see []string
	for _, k := range root.Commands {
		if len(k.Commands) > 0 {
			see = append(see, fmt.Sprintf(".BR %s (1)", roff(name+"-"+k.Name)))
		}
	}
	sort.Strings(see)
	b.WriteString(strings.Join(see, ",\n") + ",\n.BR flock (1)\n")
	return []byte(b.String())
}

func manKind(root, k *Node, name string) []byte {
	var b strings.Builder
	page := name + "-" + k.Name
	th(&b, page, name)
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roff(page), roff(strings.TrimSuffix(k.Help, ".")))
	b.WriteString(".SH SYNOPSIS\n")
	for i, v := range k.Commands {
		if i > 0 {
			b.WriteString(".br\n")
		}
		fmt.Fprintf(&b, ".B %s %s %s\n[\\fIFLAGS\\fR] %s\n", roff(name), roff(k.Name), roff(v.Name), synopsisArgs(v))
	}
	b.WriteString(".SH DESCRIPTION\n")
	fmt.Fprintf(&b, "%s\n", roff(k.Help))
	if k.Detail != "" {
		text(&b, k.Detail)
	}
	for _, v := range k.Commands {
		fmt.Fprintf(&b, ".SH %s\n", quoted(strings.ToUpper(k.Name+" "+v.Name)))
		fmt.Fprintf(&b, "%s\n", roff(v.Help))
		if v.Detail != "" {
			text(&b, v.Detail)
		}
		if len(v.Args) > 0 {
			b.WriteString(".SS Arguments\n")
			for _, a := range v.Args {
				fmt.Fprintf(&b, ".TP\n.I %s\n%s\n", roff(argName(a)), roff(a.Help))
			}
		}
		if len(v.Flags) > 0 {
			b.WriteString(".SS Flags\n")
			flags(&b, v.Flags)
		}
	}
	if len(k.Flags) > 0 {
		b.WriteString(".SH \"FLAGS OF EVERY VERB\"\n")
		flags(&b, k.Flags)
	}
	b.WriteString(".SH \"GLOBAL FLAGS\"\n")
	flags(&b, root.Flags)
	fmt.Fprintf(&b, ".SH \"SEE ALSO\"\n.BR %s (1)\n", roff(name))
	return []byte(b.String())
}

func th(b *strings.Builder, page, name string) {
	fmt.Fprintf(b, ".\\\" Generated from %s's command line by internal/kongdoc; do not edit.\n", name)
	fmt.Fprintf(b, ".TH %s 1 \"\" %s \"User Commands\"\n", roff(strings.ToUpper(page)), quoted(name))
}

// synopsisArgs is a verb's arguments as the synopsis shows them.
func synopsisArgs(v *Node) string {
	var w []string
	for _, a := range v.Args {
		s := fmt.Sprintf("\\fI%s\\fR", roff(argName(a)))
		switch {
		case a.Passthrough:
			s = fmt.Sprintf("\\fB\\-\\-\\fR \\fI%s\\fR [\\fIARG\\fR...]", roff(argName(a)))
		case a.Optional:
			s = "[" + s + "...]"
		}
		w = append(w, s)
	}
	return strings.Join(w, " ")
}

func argName(a Arg) string { return strings.ToUpper(a.Name) }

// flags writes a tagged paragraph per flag.
func flags(b *strings.Builder, fs []Flag) {
	for _, f := range fs {
		var names []string
		if f.Short != "" {
			names = append(names, "\\fB\\-"+roff(f.Short)+"\\fR")
		}
		long := "\\fB\\-\\-" + roff(f.Name) + "\\fR"
		if f.Negation != "" {
			long += ", \\fB\\-\\-" + roff(f.Negation) + "\\fR"
		}
		names = append(names, long)
		for _, a := range f.Aliases {
			names = append(names, "\\fB\\-\\-"+roff(a)+"\\fR")
		}
		head := strings.Join(names, ", ")
		if f.Placeholder != "" {
			head += "=\\fI" + roff(f.Placeholder) + "\\fR"
		}
		help := f.Help
		if f.Default != "" && f.Placeholder != "" {
			help += " Default: " + f.Default + "."
		}
		if len(f.Env) > 0 {
			help += " Environment: $" + strings.Join(f.Env, ", $") + "."
		}
		fmt.Fprintf(b, ".TP\n%s\n%s\n", head, roff(help))
	}
}

// text writes help text as --help shows it: paragraphs kept, lines not
// refilled (the text lines up examples and tables of its own).
func text(b *strings.Builder, s string) {
	for _, p := range strings.Split(strings.TrimSpace(s), "\n\n") {
		b.WriteString(".PP\n.nf\n")
		for _, l := range strings.Split(p, "\n") {
			b.WriteString(roff(l) + "\n")
		}
		b.WriteString(".fi\n")
	}
}

// roff escapes s for a line of roff text.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// quoted is s as one argument of a request.
func quoted(s string) string {
	return `"` + strings.ReplaceAll(roff(s), `"`, `\(dq`) + `"`
}
