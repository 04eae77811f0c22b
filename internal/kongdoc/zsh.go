package kongdoc

import (
	"fmt"
	"strings"
)

// Zsh is the zsh completion function of the program described by root,
// for a directory in $fpath as _NAME (it also works when sourced).
func Zsh(root *Node, name string) []byte {
	fn := "_" + ident(name)
	var b strings.Builder
	fmt.Fprintf(&b, "#compdef %s\n# zsh completion for %s. Generated from its command line by internal/kongdoc\n# (%s completion zsh); do not edit.\n\n", name, name, name)
	// Sub-commands (name:description) of a path.
	fmt.Fprintf(&b, "%s_cmds() {\n\tcase $1 in\n", fn)
	for _, e := range table(root) {
		if len(e.cmds) == 0 {
			continue
		}
		var items []string
		for _, c := range e.cmds {
			items = append(items, sq(c.Name+":"+oneLine(c.Help)))
		}
		fmt.Fprintf(&b, "\t%s) reply=(%s) ;;\n", sq(e.path), strings.Join(items, " "))
	}
	b.WriteString("\t*) reply=() ;;\n\tesac\n}\n\n")
	// Flags (word:description) valid at a path.
	fmt.Fprintf(&b, "%s_flags() {\n\tcase $1 in\n", fn)
	for _, e := range table(root) {
		var items []string
		for _, f := range e.flags {
			for _, w := range f.flagWords() {
				items = append(items, sq(w+":"+oneLine(f.Help)))
			}
		}
		fmt.Fprintf(&b, "\t%s) reply=(%s) ;;\n", sq(e.path), strings.Join(items, " "))
	}
	b.WriteString("\t*) reply=() ;;\n\tesac\n}\n\n")
	valueFunc(&b, root, fn, "reply=()", func(f Flag) string {
		var vals []string
		for _, x := range f.Enum {
			vals = append(vals, sq(x))
		}
		return "reply=(" + strings.Join(vals, " ") + ")"
	})
	fmt.Fprintf(&b, `# %[1]s_state reads $words before $CURRENT: it sets what to offer
# (commands, flags, values, files, or wrapped from the index of the wrapped
# command) and reply.
%[1]s_state() {
	local path= value= w i
	what= wrapped=0
	for ((i = 2; i < CURRENT; i++)); do
		w=${words[i]}
		if [[ -n $value ]]; then value=; continue; fi
		case $w in
		--) what=wrapped wrapped=$((i + 1)); reply=(); return ;;
		--*=*) ;;
		-*) if %[1]s_value "$path" "$w"; then value=$w; fi ;;
		*)
			%[1]s_cmds "$path"
			if (( ${reply[(I)${w}:*]} )); then path=${path:+$path }$w; fi
			;;
		esac
	done
	if [[ -n $value ]]; then
		%[1]s_value "$path" "$value"
		if (( $#reply )); then what=values; else what=files; fi
		return
	fi
	if [[ ${words[CURRENT]} == -* ]]; then
		%[1]s_flags "$path"; what=flags; return
	fi
	%[1]s_cmds "$path"
	if (( $#reply )); then what=commands; else what=files; fi
}

%[1]s() {
	local what wrapped
	local -a reply
	%[1]s_state
	case $what in
	wrapped)
		# The wrapped command completes as if typed alone.
		words=("${(@)words[wrapped,-1]}")
		(( CURRENT -= wrapped - 1 ))
		_normal
		;;
	values) compadd -a reply ;;
	flags) _describe -t flags flag reply ;;
	commands) _describe -t commands command reply ;;
	*) _files ;;
	esac
}

if [[ $funcstack[1] == %[1]s ]]; then
	%[1]s "$@"
elif (( $+functions[compdef] )); then
	compdef %[1]s %[2]s
fi
`, fn, name)
	return []byte(b.String())
}
