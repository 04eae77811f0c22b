package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
)

// TestQueuedWaiterWhoseLeaseIsRevokedQueuesAgain (issue 17): a waiter
// whose queue lease is revoked while it waits lost its place, not a lock:
// nothing ran. Before it exited 76 ("lost"). Now it queues again while
// --wait lasts (and runs once the holder is done), else it exits 75.
func TestQueuedWaiterWhoseLeaseIsRevokedQueuesAgain(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	for _, tc := range []struct {
		name string
		wait string
		want int
	}{
		{"requeued-within-wait", "30s", 0},
		{"wait-runs-out", "3s", 75},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "rq-" + tc.name
			ran := tmp(t, "ran")
			holder := startLW(t, nil, lockArgs(name, c.Endpoints(), fast, "sleep", "6")...)
			waitKeys(t, cli, name+"/", 1)
			waiter := startLW(t, nil, lockArgs(name, c.Endpoints(), append([]string{"--wait", tc.wait}, fast...),
				"sh", "-c", fmt.Sprintf("echo ran > %s", ran))...)
			waitKeys(t, cli, name+"/", 2)
			resp, err := cli.Get(context.Background(), name+"/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
			if err != nil || len(resp.Kvs) != 2 {
				t.Fatalf("want the holder's and the waiter's keys, have %v %v", resp, err)
			}
			if _, err := cli.Revoke(context.Background(), clientv3.LeaseID(resp.Kvs[1].Lease)); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			code := waiter.wait(t, 40*time.Second)
			t.Logf("RESULT %s | waiter exit %d after %v | %s", tc.name, code, time.Since(start).Round(100*time.Millisecond), lastLineOf(waiter.out.String()))
			_, statErr := os.Stat(ran)
			if code != tc.want || (tc.want == 0) != (statErr == nil) {
				t.Fatalf("want exit %d (ran: %v), have %d (ran: %v):\n%s", tc.want, tc.want == 0, code, statErr == nil, waiter.out.String())
			}
			if code := holder.wait(t, 30*time.Second); code != 0 {
				t.Fatalf("holder: %d\n%s", code, holder.out.String())
			}
		})
	}
}

func lastLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
