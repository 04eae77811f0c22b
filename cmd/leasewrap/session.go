package main

// sessionCmd groups the session verbs. The admin verb (owners) is in its
// own file; run and maintain are in session_run.go and session_maintain.go.
type sessionCmd struct {
	Run      sessionRunCmd      `cmd:"" help:"Own a session while a command runs."`
	Maintain sessionMaintainCmd `cmd:"" help:"Hold a session's coordinator exclusively while a command runs (offline maintenance)."`
	Owners   sessionOwnersCmd   `cmd:"" help:"List a session's owner records and their liveness (read-only)."`
}
