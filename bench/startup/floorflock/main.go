// Command floorflock is the flock kind's floor in `make bench`:
// `floorflock PATH CMD...` takes flock(2) LOCK_EX on PATH as leasewrap's
// flock kind does (lease/flock) and runs CMD (an absolute path) with the
// locked descriptor, through floor.Run: no CLI, no supervisor.
package main

import (
	"os"

	"github.com/leasewrap/leasewrap/bench/startup/floor"
	"github.com/leasewrap/leasewrap/lease/flock"
)

func main() {
	l, err := flock.NewLocker(flock.Config{Path: os.Args[1], Holder: "floor"})
	if err != nil {
		os.Exit(64)
	}
	os.Exit(floor.Run(l, os.Args[2:]))
}
