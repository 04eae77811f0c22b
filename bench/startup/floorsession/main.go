// Command floorsession is the session kind's floor in `make bench`:
// `floorsession ROOT SID CMD...` registers as the owner of session SID
// (writer epoch 6) under ROOT, runs CMD (an absolute path) and
// unregisters, through floor.Run: the session protocol's work
// (lease/session) with no CLI and no supervisor.
package main

import (
	"os"

	"github.com/leasewrap/leasewrap/bench/startup/floor"
	"github.com/leasewrap/leasewrap/lease/session"
)

func main() {
	sid, err := session.ParseID(os.Args[2])
	if err != nil {
		os.Exit(64)
	}
	epoch := uint32(6)
	oc := session.OwnerContext{StorageWriterEpoch: &epoch, DaemonInstanceID: session.Some("floor"), ExecutablePath: session.Some(os.Args[3])}
	l, err := session.NewLocker(session.LockerConfig{SessionID: sid, Root: os.Args[1], LockWait: session.TryOnceLockWait, OwnerContext: oc})
	if err != nil {
		os.Exit(64)
	}
	os.Exit(floor.Run(l, os.Args[3:]))
}
