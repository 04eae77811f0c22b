package main

import (
	"errors"

	"github.com/leasewrap/leasewrap/lease/session"
)

// sessionCmd groups the session verbs. The admin verb (owners) is in its
// own file; run and maintain are in session_run.go and session_maintain.go.
type sessionCmd struct {
	Run      sessionRunCmd      `cmd:"" help:"Own a session while a command runs."`
	Maintain sessionMaintainCmd `cmd:"" help:"Hold a session's coordinator exclusively while a command runs (offline maintenance)."`
	Owners   sessionOwnersCmd   `cmd:"" help:"List a session's owner records and their liveness (read-only)."`
}

// sessionFlags are the session id and root of every session verb.
type sessionFlags struct {
	SID  string `arg:"" name:"sid" help:"Session id: a lowercase hyphenated UUID."`
	Root string `help:"Session root directory (holding locks/ and leases/). Required unless LEASEWRAP_SESSION_ROOT is set." env:"LEASEWRAP_SESSION_ROOT" placeholder:"DIR"`

	sid session.ID // SID, parsed by check
}

// check parses the session id and requires a root.
func (f *sessionFlags) check() error {
	sid, err := session.ParseID(f.SID)
	if err != nil {
		return err
	}
	if f.Root == "" {
		return errors.New("no session root: give --root DIR or set LEASEWRAP_SESSION_ROOT (bcode's session root, holding locks/ and leases/)")
	}
	if err := checkDirFlag("--root (or LEASEWRAP_SESSION_ROOT)", f.Root); err != nil {
		return err
	}
	f.sid = sid
	return nil
}
