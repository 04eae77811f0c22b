package main

import (
	"github.com/leasewrap/leasewrap/lease/flock"
	"github.com/leasewrap/leasewrap/lease/reserve"
	"github.com/leasewrap/leasewrap/lease/session"
)

// LeaseName is the kind and key each run verb's lease will have
// (cli.LeaseNamer), for error lines before the Locker exists.
func (c *flockRunCmd) LeaseName() (string, string)   { return flock.Kind, c.Path }
func (c *claimRunCmd) LeaseName() (string, string)   { return "claim", c.Key }
func (c *reserveRunCmd) LeaseName() (string, string) { return reserve.Kind, c.Key }
func (c *sessionRunCmd) LeaseName() (string, string) { return session.KindOwner, c.SID }
func (c *sessionMaintainCmd) LeaseName() (string, string) {
	return session.KindMaintenance, c.SID
}
