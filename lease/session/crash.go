package session

import (
	"os"

	"golang.org/x/sys/unix"
)

// Crash points: the process kills itself (SIGKILL, like the seed's abort:
// no clean-up runs) at a protocol boundary when the named environment
// variable is set. Only this package's tests set them, to prove a crash at
// the boundary leaves a recoverable state.
const (
	// crashPrePublish: owner record written, fsynced and locked, not yet
	// renamed into place (the seed's BCODE_LEASE_PRE_PUBLISH_CRASH).
	crashPrePublish = "LEASEWRAP_SESSION_CRASH_PRE_PUBLISH"
	// crashHandoff: maintenance → lease transition with the owner record
	// published and the coordinator still held (the seed's
	// BCODE_MIGRATION_LEASE_HANDOFF_CRASH).
	crashHandoff = "LEASEWRAP_SESSION_CRASH_HANDOFF"
)

func crashPoint(env string) {
	if os.Getenv(env) == "" {
		return
	}
	unix.Kill(os.Getpid(), unix.SIGKILL)
	select {} // SIGKILL is not deliverable late; never return past the point
}
