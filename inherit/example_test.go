package inherit_test

import (
	"fmt"
	"log"

	"github.com/leasewrap/leasewrap/inherit"
)

// A child started by leasewrap finds its lease in the environment and
// checks it before doing work that must not run twice.
func ExampleFromEnv() {
	l, err := inherit.FromEnv()
	if err == inherit.ErrNoLease {
		fmt.Println("not under leasewrap; running unprotected")
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	if err := l.Check(); err != nil {
		log.Fatalf("lease not held: %v", err)
	}
	fmt.Printf("holding %s %s as %s\n", l.Kind, l.Key, l.Holder)
	// Output: not under leasewrap; running unprotected
}
