package main

import "github.com/leasewrap/leasewrap/kube/kubelease"

// LeaseName is the kind and key kube run's Lease will have
// (cli.LeaseNamer), for the error line of a command line refused before
// the Locker is built: the key is NAME, or NAMESPACE/NAME when -n is
// given (the Locker's own Key, used afterwards, always has the namespace).
func (c *runCmd) LeaseName() (string, string) {
	if c.Namespace != "" {
		return kubelease.Kind, c.Namespace + "/" + c.Name
	}
	return kubelease.Kind, c.Name
}
