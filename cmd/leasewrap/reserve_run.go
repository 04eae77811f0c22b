package main

import "errors"

// reserveRunCmd is written in the supervisor change; this placeholder keeps the
// tree building while the protocol packages land.
type reserveRunCmd struct{}

func (c *reserveRunCmd) Run() error { return errors.New("not built yet") }
