// Command gorun is the run-verb floor of `make bench`: a static Go program
// that only starts its arguments as a child and waits for it, as a Go
// wrapper that held no lease at all would.
package main

import (
	"os"
	"os/exec"
)

func main() {
	c := exec.Command(os.Args[1], os.Args[2:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := c.Run(); err != nil {
		os.Exit(1)
	}
}
