package cli

import (
	"slices"
	"strings"
)

// Args is what the one look at the command line before kong's parse
// tells: the leading words, help or version, and the log format.
type Args struct {
	// Words are the first two arguments that are neither flags nor the
	// values of the global flags (before "--").
	Words []string
	// Help: -h or --help appears before "--"; Version: --version does.
	Help, Version bool
	// LogFormat is the last --log-format value before "--", "" if none.
	LogFormat string

	at []int // the index of each of Words in the arguments
}

// valueFlags are the global flags whose value may be the next argument.
var valueFlags = map[string]bool{"--log-format": true, "--log-level": true}

// ScanArgs scans args (without argv[0]) up to "--".
func ScanArgs(args []string) Args {
	var a Args
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			return a
		case valueFlags[arg]:
			if i+1 < len(args) {
				if arg == "--log-format" {
					a.LogFormat = args[i+1]
				}
				i++ // its value follows
			}
		case strings.HasPrefix(arg, "--log-format="):
			a.LogFormat = strings.TrimPrefix(arg, "--log-format=")
		case arg == "-h" || arg == "--help":
			a.Help = true
		case arg == "--version":
			a.Version = true
		case strings.HasPrefix(arg, "-"):
		default:
			if len(a.Words) < 2 {
				a.Words = append(a.Words, arg)
				a.at = append(a.at, i)
			}
		}
	}
	return a
}

// Kind is the first word (the kind), or "".
func (a Args) Kind() string {
	if len(a.Words) == 0 {
		return ""
	}
	return a.Words[0]
}

// PrintsOnly tells a command line that only prints help or the version.
func (a Args) PrintsOnly() bool { return a.Help || a.Version }

// Bare tells a command line with no command, help or version: Main prints
// the usage on stderr and exits 64, as flock(1) does.
func (a Args) Bare() bool { return len(a.Words) == 0 && !a.Help && !a.Version }

// HelpArgs turns `help [KIND [VERB]]` into `[KIND [VERB]] --help`; other
// command lines are returned as they are.
func HelpArgs(args []string) []string {
	a := ScanArgs(args)
	if a.Kind() != "help" {
		return args
	}
	i := a.at[0]
	out := make([]string, 0, len(args)+1)
	out = append(out, args[:i]...)
	rest := args[i+1:]
	if dd := slices.Index(rest, "--"); dd >= 0 {
		out = append(out, rest[:dd]...)
		out = append(out, "--help")
		return append(out, rest[dd:]...)
	}
	out = append(out, rest...)
	return append(out, "--help")
}
