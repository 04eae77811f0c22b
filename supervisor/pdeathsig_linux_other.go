//go:build linux && !amd64

package supervisor

// tracedPdeathsig: only amd64 clears the parent-death signal of a traced
// child (clearPdeathsig); elsewhere the child starts without one, and the
// fork-to-exec window of the ptrace anchor stays open (docs/CLAIMS.md, --anchor).
const tracedPdeathsig = false

func clearPdeathsig(pid int) error { return nil }
