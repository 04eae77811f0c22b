package flock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/lease/flock"
)

// A Locker tries once; a second one on the same file is told it is held
// until the first lease is finished.
func Example() {
	dir, _ := os.MkdirTemp("", "flock-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "job.lock")
	a, _ := flock.NewLocker(flock.Config{Path: path, Holder: "a"})
	b, _ := flock.NewLocker(flock.Config{Path: path, Holder: "b"})
	defer b.Close()

	held, _ := a.Acquire(context.Background())
	_, err := b.Acquire(context.Background())
	fmt.Println("b while a holds:", errors.Is(err, lease.ErrHeld))
	held.Finish(context.Background(), lease.Result{})
	got, err := b.Acquire(context.Background())
	fmt.Println("b after a finished:", err == nil)
	got.Finish(context.Background(), lease.Result{})
	// Output:
	// b while a holds: true
	// b after a finished: true
}
