// Command floorclaim is the claim kind's floor in `make bench`:
// `floorclaim ROOT KEY CMD...` takes the claim KEY under ROOT with a TTL of
// 2 minutes (leasewrap's default) for its own pid, runs CMD (an absolute
// path), appends the audit events and releases, through floor.Run: the
// claims protocol's work (lease/claim) with no CLI, no supervisor and no
// anchoring of the command's pid.
package main

import (
	"os"
	"time"

	"github.com/leasewrap/leasewrap/bench/startup/floor"
	"github.com/leasewrap/leasewrap/lease/claim"
)

func main() {
	l, err := claim.NewLocker(claim.LockerConfig{Key: os.Args[2], Holder: "floor", Root: os.Args[1], TTL: 2 * time.Minute})
	if err != nil {
		os.Exit(64)
	}
	os.Exit(floor.Run(l, os.Args[3:]))
}
