// Command floorreserve is the reservation kind's floor in `make bench`:
// `floorreserve HOME KEY CMD...` reserves KEY under the orchestratectl home
// HOME, runs CMD (an absolute path) and publishes its result, or replays a
// published key, through floor.Run: the reservation protocol's work
// (lease/reserve) with no CLI and no supervisor.
package main

import (
	"os"

	"github.com/leasewrap/leasewrap/bench/startup/floor"
	"github.com/leasewrap/leasewrap/lease/reserve"
)

func main() {
	host, _ := os.Hostname()
	l, err := reserve.NewLocker(reserve.LockerConfig{Key: os.Args[2], Home: os.Args[1], Host: host, Argv: os.Args[3:]})
	if err != nil {
		os.Exit(64)
	}
	os.Exit(floor.Run(l, os.Args[3:]))
}
