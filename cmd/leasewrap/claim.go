package main

// claimCmd groups the claim verbs. The admin verbs (acquire, release,
// status, renew, list) are one file each; run is in claim_run.go.
type claimCmd struct {
	Run claimRunCmd `cmd:"" help:"Hold a claim while a command runs."`
}
