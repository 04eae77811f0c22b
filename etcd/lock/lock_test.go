package lock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/lease"
)

func TestMain(m *testing.M) {
	etcdtest.Serve()
	os.Exit(m.Run())
}

func newLocker(t *testing.T, cli *clientv3.Client, name string) *Locker {
	t.Helper()
	l, err := New(Config{Client: cli, Name: name, TTL: 5 * time.Second, Holder: "test", Endpoints: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func TestTryLockAndRelease(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	ctx := context.Background()
	a, err := newLocker(t, cli, "job").Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	env := envMap(a.Env())
	if !strings.HasPrefix(env["ETCD_LOCK_KEY"], "job/") || env["LEASEWRAP_FENCE"] == "" || env["ETCD_LOCK_REV"] != env["LEASEWRAP_FENCE"] {
		t.Fatalf("uncontended holder env: %v", env)
	}
	if a.TTL() < 5*time.Second {
		t.Fatalf("want granted TTL >= 5s, have %v", a.TTL())
	}
	_, err = newLocker(t, cli, "job").Acquire(ctx)
	var he *lease.HeldError
	if !errors.As(err, &he) || he.Holder != env["ETCD_LOCK_KEY"] {
		t.Fatalf("want HeldError naming %s, have %v", env["ETCD_LOCK_KEY"], err)
	}
	// The failed try left nothing behind: one key, one lease.
	assertQueue(t, cli, "job/", 1)
	if err := a.Renew(ctx); err != nil {
		t.Fatalf("renew: %v", err)
	}
	if err := a.Finish(ctx, lease.Result{}); err != nil {
		t.Fatal(err)
	}
	assertQueue(t, cli, "job/", 0)
	if err := a.Renew(ctx); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("renew after finish: want ErrLost, have %v", err)
	}
}

func assertQueue(t *testing.T, cli *clientv3.Client, pfx string, n int) {
	t.Helper()
	resp, err := cli.Get(context.Background(), pfx, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != n {
		t.Fatalf("want %d keys under %s, have %d", n, pfx, len(resp.Kvs))
	}
	ls, err := cli.Leases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ls.Leases) != n {
		t.Fatalf("want %d leases, have %d", n, len(ls.Leases))
	}
}

func TestWaitDeadlineLeavesNothing(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	a, err := newLocker(t, cli, "w").Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = newLocker(t, cli, "w").AcquireWait(ctx)
	if !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("want ErrHeld after the wait, have %v", err)
	}
	assertQueue(t, cli, "w/", 1)
	a.Finish(context.Background(), lease.Result{})
}

func TestWaitersFIFOAndLock(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	first, err := newLocker(t, cli, "q").Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		i   int
		l   lease.Lease
		err error
	}
	gotc := make(chan got, 3)
	for i := range 3 {
		go func() {
			l, err := newLocker(t, cli, "q").AcquireWait(context.Background())
			gotc <- got{i, l, err}
		}()
		// Queue in order: wait until this waiter's key is there.
		waitKeys(t, cli, "q/", i+2)
	}
	first.Finish(context.Background(), lease.Result{})
	var prevFence int64
	for want := range 3 {
		select {
		case g := <-gotc:
			if g.err != nil || g.i != want {
				t.Fatalf("want waiter %d to get the lock, have waiter %d (%v)", want, g.i, g.err)
			}
			env := envMap(g.l.Env())
			fence, _ := strconv.ParseInt(env["LEASEWRAP_FENCE"], 10, 64)
			rev, _ := strconv.ParseInt(env["ETCD_LOCK_REV"], 10, 64)
			if fence <= prevFence || rev <= fence {
				t.Fatalf("want increasing fences and ETCD_LOCK_REV > fence after a wait, have fence %d (prev %d) rev %d", fence, prevFence, rev)
			}
			prevFence = fence
			g.l.Finish(context.Background(), lease.Result{})
		case <-time.After(testutil.Scale(10 * time.Second)):
			t.Fatalf("waiter %d did not get the lock within 10s", want)
		}
	}
	assertQueue(t, cli, "q/", 0)
}

func waitKeys(t *testing.T, cli *clientv3.Client, pfx string, n int) {
	t.Helper()
	testutil.WaitFor(t, fmt.Sprintf("%d keys under %s", n, pfx), 10*time.Second, func() bool {
		resp, err := cli.Get(context.Background(), pfx, clientv3.WithPrefix(), clientv3.WithCountOnly())
		return err == nil && resp.Count >= int64(n)
	})
}

func TestRevokeIsLossAtOnce(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	l, err := newLocker(t, cli, "r").Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	id, _ := strconv.ParseInt(envMap(l.Env())["LEASEWRAP_LEASE_ID"], 16, 64)
	start := time.Now()
	if _, err := cli.Revoke(context.Background(), clientv3.LeaseID(id)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
		t.Logf("loss noticed %v after the revoke", time.Since(start))
	case <-time.After(testutil.Scale(5 * time.Second)):
		t.Fatal("Done not closed after the revoke")
	}
	if err := l.Renew(context.Background()); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("want ErrLost, have %v", err)
	}
	l.Finish(context.Background(), lease.Result{Lost: true})
}

// TestNextInLineIsGrantedOnlyWhileItsKeyIsOurs: the waiter next in line
// takes the holder key's delete event as its turn without a read (one
// watch covers both keys). Its own key gone at or before that delete (in
// the same transaction, or before it) must not be granted: it queues again
// with a new key. With its key intact the turn's revision is the delete's.
func TestNextInLineIsGrantedOnlyWhileItsKeyIsOurs(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		deletes func(holder, waiter string) error
		same    bool // the waiter keeps its key
	}{
		{"holder-only", func(h, w string) error {
			_, err := cli.Delete(ctx, h)
			return err
		}, true},
		{"both-in-one-txn", func(h, w string) error {
			_, err := cli.Txn(ctx).Then(clientv3.OpDelete(w), clientv3.OpDelete(h)).Commit()
			return err
		}, false},
		{"ours-first", func(h, w string) error {
			if _, err := cli.Delete(ctx, w); err != nil {
				return err
			}
			_, err := cli.Delete(ctx, h)
			return err
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "next-" + tc.name
			holder, err := newLocker(t, cli, name).Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Finish(ctx, lease.Result{})
			type got struct {
				l   lease.Lease
				err error
			}
			gotc := make(chan got, 1)
			go func() {
				l, err := newLocker(t, cli, name).AcquireWait(ctx)
				gotc <- got{l, err}
			}()
			waitKeys(t, cli, name+"/", 2)
			resp, err := cli.Get(ctx, name+"/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
			if err != nil || len(resp.Kvs) != 2 {
				t.Fatalf("want the holder's and the waiter's keys, have %v %v", resp, err)
			}
			waiterKey := string(resp.Kvs[1].Key)
			time.Sleep(100 * time.Millisecond) // let the waiter watch
			if err := tc.deletes(string(resp.Kvs[0].Key), waiterKey); err != nil {
				t.Fatal(err)
			}
			select {
			case g := <-gotc:
				if g.err != nil {
					t.Fatal(g.err)
				}
				defer g.l.Finish(ctx, lease.Result{})
				key := g.l.(*Lease).LockKey()
				if (key == waiterKey) != tc.same {
					t.Fatalf("want the waiter granted with its first key %s: %v, have %s", waiterKey, tc.same, key)
				}
				now, err := cli.Get(ctx, key)
				if err != nil || len(now.Kvs) != 1 || now.Kvs[0].CreateRevision != g.l.(*Lease).Fence() {
					t.Fatalf("the granted key %s is not the waiter's: %v %v", key, now, err)
				}
			case <-time.After(testutil.Scale(10 * time.Second)):
				t.Fatal("the waiter was not granted within 10s")
			}
		})
	}
}
