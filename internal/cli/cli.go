// Package cli is what every leasewrap executable shares on its command
// line: the global flags and the one logger, the run verbs' flags and how
// they configure the supervisor, and the exit-code contract (decided in
// ExitCode alone). cmd/leasewrap and the etcd module's leasewrap-etcd both
// build on it, so a run verb means the same in each.
package cli

import (
	"errors"

	"github.com/alecthomas/kong"
)

// Globals are the flags every invocation has.
type Globals struct {
	LogFormat string           `help:"Log format on stderr: auto (coloured text on a terminal, plain text otherwise), text or json." enum:"auto,text,json" default:"auto" env:"LEASEWRAP_LOG_FORMAT"`
	LogLevel  string           `help:"Least severe level logged: debug, info, warn or error." enum:"debug,info,warn,error" default:"info" env:"LEASEWRAP_LOG_LEVEL"`
	Quiet     bool             `short:"q" help:"Silent unless a person is needed (a crontab line): log only warnings and errors, print nothing when a run is skipped because the lease is held or --wait ran out (whatever --conflict-exit-code is), and only the supervisor's line when the lease is lost."`
	Version   kong.VersionFlag `help:"Print the version and exit."`
}

// ErrUsage marks a usage error (exit 64, or 2 for the admin verbs).
var ErrUsage = errors.New("usage")
