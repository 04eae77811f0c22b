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
	sid, err := session.ParseID("5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42")
	if err != nil {
		fmt.Println(err)
		return
	}
	s := session.NewStore(root)

	epoch := session.Some(session.CurrentWriterEpoch)
	g, err := s.Acquire(context.Background(), sid, session.OwnerContext{StorageWriterEpoch: epoch, DaemonInstanceID: session.Some("daemon-a")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Release()

	_, err = s.Acquire(context.Background(), sid, session.OwnerContext{StorageWriterEpoch: epoch, DaemonInstanceID: session.Some("daemon-b")})
	fmt.Println(err != nil)

	recs, _ := s.Inspect(sid)
	fmt.Println(len(recs), recs[0].Liveness, *recs[0].Owner.DaemonInstanceID)
	// Output:
	// true
	// 1 live daemon-a
}
