package supervisor_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/leasewrap/leasewrap/lease/claim"
	"github.com/leasewrap/leasewrap/supervisor"
)

// Run a command under a work claim and tell what happened from the
// Result; OnEvent sees the run's events as they happen.
func ExampleRun() {
	root, err := os.MkdirTemp("", "leasewrap-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(root)
	l, err := claim.NewLocker(claim.LockerConfig{Key: "example:nightly", Holder: "example", Root: root, EventsDir: root, TTL: time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	var started int
	res, err := supervisor.Run(context.Background(), supervisor.Config{
		Locker:    l,
		Argv:      []string{"echo", "hello"},
		KillGrace: time.Second,
		OnEvent: func(e supervisor.Event) {
			if e.Type == supervisor.EventStarted {
				started++ // called from the supervisor's goroutine: must not block
			}
		},
	})
	if err != nil {
		fmt.Println("failed:", err)
		return
	}
	fmt.Println(res.Outcome, res.ExitCode, res.Holder, started)
	// Output:
	// hello
	// ran 0 example 1
}
