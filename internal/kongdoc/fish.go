package kongdoc

import (
	"fmt"
	"strings"
)

// Fish is the fish completion script of the program described by root,
// for a directory in $fish_complete_path as NAME.fish.
func Fish(root *Node, name string) []byte {
	fn := "__" + ident(name)
	var b strings.Builder
	fmt.Fprintf(&b, "# fish completion for %s. Generated from its command line by internal/kongdoc\n# (%s completion fish); do not edit.\n\n", name, name)
	fmt.Fprintf(&b, "function %s_cmds\n\tswitch $argv[1]\n", fn)
	for _, e := range table(root) {
		if len(e.cmds) > 0 {
			fmt.Fprintf(&b, "\tcase %s\n\t\tprintf '%%s\\n' %s\n", sq(e.path), strings.Join(e.cmdNames(), " "))
		}
	}
	b.WriteString("\tend\nend\n\n")
	fmt.Fprintf(&b, "function %s_valued\n\tswitch $argv[1]\n", fn)
	for _, e := range table(root) {
		if v := e.valued(); len(v) > 0 {
			fmt.Fprintf(&b, "\tcase %s\n\t\tcontains -- $argv[2] %s\n\t\treturn\n", sq(e.path), strings.Join(v, " "))
		}
	}
	b.WriteString("\tend\n\treturn 1\nend\n\n")
	fmt.Fprintf(&b, `# %[1]s_path prints the command path the words before the cursor
# name ("flock run"), or "--" once the wrapped command has begun.
function %[1]s_path
	set -l toks (commandline -opc)
	set -e toks[1]
	set -l path
	set -l value 0
	for w in $toks
		if test $value = 1
			set value 0
			continue
		end
		switch $w
			case --
				echo -- --
				return
			case '--*=*'
			case '-*'
				if %[1]s_valued "$path" $w
					set value 1
				end
			case '*'
				if contains -- $w (%[1]s_cmds "$path")
					set path (string trim -- "$path $w")
				end
		end
	end
	echo -- "$path"
end

function %[1]s_at
	test (%[1]s_path) = "$argv[1]"
end

# The wrapped command completes as if typed alone.
function %[1]s_wrapped
	set -l toks (commandline -opc)
	set -l i (contains -i -- -- $toks)
	complete -C (string join -- ' ' $toks[(math $i + 1)..-1] (commandline -ct))
end

complete -c %[2]s -n '%[1]s_at --' -f -a '(%[1]s_wrapped)'
`, fn, name)
	for _, e := range table(root) {
		cond := fmt.Sprintf("%s_at %s", fn, sq(e.path))
		if len(e.cmds) > 0 {
			fmt.Fprintf(&b, "complete -c %s -n %s -f\n", name, sq(cond))
			for _, c := range e.cmds {
				fmt.Fprintf(&b, "complete -c %s -n %s -a %s -d %s\n", name, sq(cond), sq(c.Name), sq(oneLine(c.Help)))
			}
		}
		for _, f := range e.flags {
			line := fmt.Sprintf("complete -c %s -n %s -l %s", name, sq(cond), f.Name)
			if f.Short != "" {
				line += " -s " + f.Short
			}
			switch {
			case len(f.Enum) > 0:
				line += " -x -a " + sq(strings.Join(f.Enum, " "))
			case f.Placeholder != "":
				line += " -r"
			}
			fmt.Fprintf(&b, "%s -d %s\n", line, sq(oneLine(f.Help)))
			if f.Negation != "" {
				fmt.Fprintf(&b, "complete -c %s -n %s -l %s -d %s\n", name, sq(cond), f.Negation, sq(oneLine(f.Help)))
			}
			for _, a := range f.Aliases {
				fmt.Fprintf(&b, "complete -c %s -n %s -l %s -d %s\n", name, sq(cond), a, sq(oneLine(f.Help)))
			}
		}
	}
	return []byte(b.String())
}
