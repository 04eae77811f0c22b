package session_test

import (
	"context"
	"fmt"
	"os"

	"github.com/leasewrap/leasewrap/lease/session"
)

func Example() {
	root, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(root)
	sid := session.MustParseID("5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42")
	s := session.NewStore(root)

	oc := session.DefaultOwnerContext()
	oc.DaemonInstanceID = session.Some("daemon-a")
	g, err := s.Acquire(context.Background(), sid, oc)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Release()

	other := session.DefaultOwnerContext()
	other.DaemonInstanceID = session.Some("daemon-b")
	_, err = s.Acquire(context.Background(), sid, other)
	fmt.Println(err != nil)

	obs, _ := s.OwnerObservations(sid)
	fmt.Println(len(obs), obs[0].Liveness, *obs[0].Owner.DaemonInstanceID)
	// Output:
	// true
	// 1 live daemon-a
}
