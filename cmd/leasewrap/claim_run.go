package main

import "errors"

// claimRunCmd is written in the supervisor change; this placeholder keeps the
// tree building while the protocol packages land.
type claimRunCmd struct{}

func (c *claimRunCmd) Run() error { return errors.New("not built yet") }
