// Command gochild is a Go child that finds and checks the lease leasewrap
// handed it, using the inherit package:
//
//	leasewrap reserve run export-2026-11-29 -- go run ./examples/gochild
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/leasewrap/leasewrap/inherit"
)

func main() {
	l, err := inherit.FromEnv()
	if errors.Is(err, inherit.ErrNoLease) {
		fmt.Fprintln(os.Stderr, "gochild: not started by leasewrap; refusing to run unprotected")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gochild:", err)
		os.Exit(2)
	}
	if err := l.Check(); err != nil {
		fmt.Fprintln(os.Stderr, "gochild:", err)
		os.Exit(3)
	}
	fmt.Printf("gochild: holding %s %q as %s", l.Kind, l.Key, l.Holder)
	if l.FD >= 0 {
		fmt.Printf(" (locked fd %d)", l.FD)
	}
	if id := l.Extra["LEASEWRAP_RUN_ID"]; id != "" {
		fmt.Printf(" run %s", id)
	}
	fmt.Println()
}
