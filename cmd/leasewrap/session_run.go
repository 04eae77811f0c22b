package main

import "errors"

// sessionRunCmd is written in the supervisor change; this placeholder keeps the
// tree building while the protocol packages land.
type sessionRunCmd struct{}

func (c *sessionRunCmd) Run() error { return errors.New("not built yet") }
