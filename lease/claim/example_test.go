package claim_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/leasewrap/leasewrap/lease/claim"
)

func Example() {
	root, _ := os.MkdirTemp("", "claims")
	defer os.RemoveAll(root)
	c := claim.New(claim.Options{Root: root, EventsDir: root})
	ctx := context.Background()

	acq, err := c.Acquire(ctx, "build:nightly", "ci-runner-1", claim.AcquireOptions{TTLMs: 300_000})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(acq.Event, acq.Record.Holder)

	_, err = c.Acquire(ctx, "build:nightly", "ci-runner-2", claim.AcquireOptions{})
	fmt.Println(errors.Is(err, claim.ErrHeldByOther))

	fmt.Println(c.Status("build:nightly").State)
	c.Release(ctx, "build:nightly", "ci-runner-1")
	fmt.Println(c.Status("build:nightly").State)
	// Output:
	// claim_acquired ci-runner-1
	// true
	// live
	// free
}
