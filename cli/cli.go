// Package cli is the app shell shared by leasewrap, leasewrap-etcd and
// leasewrap-kube: the global flags and logger, the run verbs' flags, the
// lookup of sibling executables, and the exit-code contract (RunExitCode,
// ExitCode). Nothing under internal/ imports it.
package cli

import (
	"errors"

	"github.com/alecthomas/kong"
)

// Globals are the flags every invocation has.
type Globals struct {
	LogFormat string           `help:"Log format on stderr: auto (coloured text on a terminal, plain text otherwise), text or json." enum:"auto,text,json" default:"auto" env:"LEASEWRAP_LOG_FORMAT"`
	LogLevel  string           `help:"Least severe level logged: debug, info, warn or error." enum:"debug,info,warn,error" default:"info" env:"LEASEWRAP_LOG_LEVEL"`
	Quiet     bool             `short:"q" help:"Silent unless a person is needed (a crontab line): log only errors (as --log-level=error), print nothing when a run is skipped because the lease is held or --wait ran out (whatever --conflict-exit-code is), and only the supervisor's line when the lease is lost."`
	Version   kong.VersionFlag `help:"Print the version and exit."`
}

// ErrUsage marks a usage error (exit 64, or 2 for the admin verbs).
var ErrUsage = errors.New("usage")
