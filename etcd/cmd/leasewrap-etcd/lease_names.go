package main

import (
	"github.com/leasewrap/leasewrap/etcd/lock"
	"github.com/leasewrap/leasewrap/etcd/once"
)

// LeaseName is the kind and key each run verb's lease will have
// (cli.LeaseNamer), for the error line of a command line refused before the
// Locker is built; afterwards the Locker's own Kind and Key are used.
func (c *lockRunCmd) LeaseName() (string, string) { return lock.Kind, c.Name }
func (c *onceRunCmd) LeaseName() (string, string) { return once.Kind, c.Key }
