package session

import "github.com/leasewrap/leasewrap/internal/fault"

// Crash points at the seed's protocol boundaries; they fire only in a
// -tags leasewrap_faults build when $LEASEWRAP_FAULT names them.
const (
	// crashPrePublish: record locked, not yet renamed (BCODE_LEASE_PRE_PUBLISH_CRASH).
	crashPrePublish = "session.pre-publish"
	// crashHandoff: record published, coordinator held (BCODE_MIGRATION_LEASE_HANDOFF_CRASH).
	crashHandoff = "session.handoff"
)

// crashHook lets this package's test helpers crash without the build tag.
var crashHook func(name string)

func crashPoint(name string) {
	fault.Point(name)
	if crashHook != nil {
		crashHook(name)
	}
}
