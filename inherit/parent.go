package inherit

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// Environment variable names of the contract.
const (
	EnvKind   = "LEASEWRAP_KIND"
	EnvKey    = "LEASEWRAP_KEY"
	EnvHolder = "LEASEWRAP_HOLDER"
	EnvFD     = "LEASEWRAP_FD"
	EnvPID    = "LEASEWRAP_PID"
	envPrefix = "LEASEWRAP_"
)

// Handover is what a parent passes to its child.
type Handover struct {
	Kind, Key, Holder string
	// File is the locked descriptor the child inherits, or nil.
	File *os.File
	// Env holds extra KEY=VALUE pairs (kind-specific, LEASEWRAP_*).
	Env []string
}

// Attach describes h in cmd's environment, built from base minus every
// LEASEWRAP_* variable, and replaces cmd.Env and cmd.ExtraFiles: h.File is the
// only extra descriptor the child gets.
func Attach(cmd *exec.Cmd, base []string, h Handover) {
	env := make([]string, 0, len(base)+6+len(h.Env))
	for _, kv := range base {
		if !strings.HasPrefix(kv, envPrefix) {
			env = append(env, kv)
		}
	}
	env = append(env,
		EnvKind+"="+h.Kind,
		EnvKey+"="+h.Key,
		EnvHolder+"="+h.Holder,
		EnvPID+"="+strconv.Itoa(os.Getpid()),
	)
	cmd.ExtraFiles = nil
	if h.File != nil {
		cmd.ExtraFiles = []*os.File{h.File}
		env = append(env, EnvFD+"=3")
	}
	cmd.Env = append(env, h.Env...)
}
