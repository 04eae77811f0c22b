package main

import (
	"os"
	"path/filepath"
)

// smallHelper is the leasewrap binary installed beside leasewrap-kube, if
// there is one: it plays the job guard of the ephemeral Lease (both call
// supervisor.Gate first) without client-go's memory. "" (use this
// executable) otherwise.
func smallHelper() string {
	self, err := os.Executable()
	if err != nil {
		return ""
	}
	small := filepath.Join(filepath.Dir(self), "leasewrap")
	if fi, err := os.Stat(small); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return ""
	}
	return small
}
