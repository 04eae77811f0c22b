package main

// reserveCmd groups the reservation verbs. The admin verbs (lookup, release, hash)
// are one file each; run is in reserve_run.go.
type reserveCmd struct {
	Run reserveRunCmd `cmd:"" help:"Run a command at most once per key; replay its result."`
}
