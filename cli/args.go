package cli

import "strings"

// Args is what a look at the command line before kong's parse tells: the
// leading words (kind, verb), whether help or the version is asked for,
// and the log format (for the lines written before, or instead of, a
// successful parse). It is the one pre-scanner of the arguments, so the
// global flags that take a value are spelled here alone.
type Args struct {
	// Words are the first two arguments that are neither flags nor the
	// values of the global flags (before "--").
	Words []string
	// Help: -h or --help appears before "--"; Version: --version does.
	Help, Version bool
	// LogFormat is the last --log-format value before "--", "" if none.
	LogFormat string
}

// valueFlags are the global flags whose value may follow as the next
// argument.
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

// PrintsOnly tells a command line that only prints, help or the version:
// kong prints and exits. Such a process writes to fds 1 and 2 themselves
// (Streams) and, like any filter, may die of SIGPIPE when its reader has
// gone.
func (a Args) PrintsOnly() bool { return a.Help || a.Version }
