package kongdoc

import (
	"fmt"
	"strings"
)

// Bash is the bash completion script of the program described by root
// (complete -F), for /usr/share/bash-completion/completions/NAME.
func Bash(root *Node, name string) []byte {
	fn := "_" + ident(name)
	var b strings.Builder
	fmt.Fprintf(&b, "# bash completion for %s. Generated from its command line by internal/kongdoc\n# (%s completion bash); do not edit.\n\n", name, name)
	// The sub-commands of a path.
	fmt.Fprintf(&b, "%s_cmds() {\n\tcase $1 in\n", fn)
	for _, e := range table(root) {
		if len(e.cmds) > 0 {
			fmt.Fprintf(&b, "\t%s) REPLY=%s ;;\n", sq(e.path), sq(strings.Join(e.cmdNames(), " ")))
		}
	}
	b.WriteString("\t*) REPLY= ;;\n\tesac\n}\n\n")
	// The flags valid at a path.
	fmt.Fprintf(&b, "%s_flags() {\n\tcase $1 in\n", fn)
	for _, e := range table(root) {
		fmt.Fprintf(&b, "\t%s) REPLY=%s ;;\n", sq(e.path), sq(strings.Join(e.flagWordsOf(), " ")))
	}
	b.WriteString("\t*) REPLY= ;;\n\tesac\n}\n\n")
	// Whether a flag takes a value at a path; REPLY its values if an enum.
	valueFunc(&b, root, fn, "REPLY=", func(f Flag) string { return "REPLY=" + sq(strings.Join(f.Enum, " ")) })
	fmt.Fprintf(&b, `%[1]s() {
	local cur=${COMP_WORDS[COMP_CWORD]} path= value= after=0 cmdat=0 w i REPLY
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if ((after)); then continue; fi
		if [[ $w == = ]]; then continue; fi # bash splits --flag=value at =
		if [[ -n $value ]]; then value=; continue; fi
		case $w in
		--) after=1 cmdat=$((i + 1)) ;;
		-*) if %[1]s_value "$path" "$w"; then value=$w; fi ;;
		*)
			%[1]s_cmds "$path"
			if [[ " $REPLY " == *" $w "* ]]; then path=${path:+$path }$w; fi
			;;
		esac
	done
	[[ $cur == = ]] && cur=
	COMPREPLY=()
	if ((after)); then
		# The wrapped command: a command name, then its own arguments.
		if ((COMP_CWORD == cmdat)); then COMPREPLY=($(compgen -c -- "$cur" | sort -u)); fi
		return
	fi
	if [[ -n $value ]]; then
		%[1]s_value "$path" "$value"
		if [[ -n $REPLY ]]; then COMPREPLY=($(compgen -W "$REPLY" -- "$cur")); fi
		return
	fi
	if [[ $cur == -* ]]; then
		%[1]s_flags "$path"
		COMPREPLY=($(compgen -W "$REPLY" -- "$cur"))
		return
	fi
	%[1]s_cmds "$path"
	if [[ -n $REPLY ]]; then COMPREPLY=($(compgen -W "$REPLY" -- "$cur")); fi
}
complete -o default -F %[1]s %[2]s
`, fn, name)
	return []byte(b.String())
}

// ident is name as part of a shell function name.
func ident(name string) string { return strings.ReplaceAll(name, "-", "_") }
