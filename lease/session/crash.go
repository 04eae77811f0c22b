package session

import "github.com/leasewrap/leasewrap/internal/fault"

// Crash points at the protocol boundaries the seed crashes its own tests
// at. They fire only in a binary built with -tags leasewrap_faults when
// $LEASEWRAP_FAULT names them (see internal/fault); a release binary has
// no way to reach them.
const (
	// crashPrePublish: owner record written, fsynced and locked, not yet
	// renamed into place (the seed's BCODE_LEASE_PRE_PUBLISH_CRASH).
	crashPrePublish = "session.pre-publish"
	// crashHandoff: maintenance → lease transition with the owner record
	// published and the coordinator still held (the seed's
	// BCODE_MIGRATION_LEASE_HANDOFF_CRASH).
	crashHandoff = "session.handoff"
)

// crashHook is a test seam: this package's helper processes set it to
// crash at a point without the build tag. Nothing outside the package's
// tests can set it.
var crashHook func(name string)

func crashPoint(name string) {
	fault.Point(name)
	if crashHook != nil {
		crashHook(name)
	}
}
