package main

// flockCmd groups the flock verbs: run alone (flock_run.go). A flock
// leaves nothing on disk to inspect or release, so there are no admin verbs.
type flockCmd struct {
	Run flockRunCmd `cmd:"" help:"Hold a flock(2) on a file while a command runs (the lock flock(1) takes)."`
}
