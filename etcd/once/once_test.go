package once

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
	"github.com/leasewrap/leasewrap/lease"
)

func TestMain(m *testing.M) {
	etcdtest.Serve()
	os.Exit(m.Run())
}

func newLocker(t *testing.T, cli *clientv3.Client, key string, publishFailures bool) *Locker {
	t.Helper()
	l, err := New(Config{Client: cli, Key: key, TTL: 5 * time.Second, Holder: "test", Host: "h", PublishFailures: publishFailures})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func finish(t *testing.T, l lease.Lease, code int) error {
	t.Helper()
	return l.Finish(context.Background(), lease.Result{ExitCode: code, Fence: time.Now().Add(time.Minute), Finished: time.Now()})
}

func TestKeyEscaping(t *testing.T) {
	for key, want := range map[string]string{"a/b": "p/a%2Fb", "50%": "p/50%25", "plain": "p/plain", "sp ace": "p/sp%20ace"} {
		if have := EtcdKey("p/", key); have != want {
			t.Errorf("EtcdKey(%q): want %q, have %q", key, want, have)
		}
	}
}

func TestRaceRunsOnceThenReplays(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	var mu sync.Mutex
	runs, replays := 0, 0
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			l, err := newLocker(t, cli, "migrate/v1", false).AcquireWait(ctx)
			var re *lease.ReplayError
			switch {
			case err == nil:
				mu.Lock()
				runs++
				mu.Unlock()
				time.Sleep(50 * time.Millisecond)
				if err := finish(t, l, 0); err != nil {
					t.Errorf("finish: %v", err)
				}
			case errors.As(err, &re) && re.ExitCode == 0:
				mu.Lock()
				replays++
				mu.Unlock()
			default:
				t.Errorf("racer: %v", err)
			}
		}()
	}
	wg.Wait()
	if runs != 1 || replays != 15 {
		t.Fatalf("want 1 run and 15 replays, have %d runs and %d replays", runs, replays)
	}
	// Published durably: no lease attached, and no lease left at all.
	resp, _ := cli.Get(context.Background(), EtcdKey(DefaultPrefix, "migrate/v1"))
	if len(resp.Kvs) != 1 || resp.Kvs[0].Lease != 0 {
		t.Fatalf("want one durable record, have %v", resp.Kvs)
	}
	if ls, _ := cli.Leases(context.Background()); len(ls.Leases) != 0 {
		t.Fatalf("want no lease left, have %d", len(ls.Leases))
	}
}

func TestFailureReleasesOrPublishes(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	ctx := context.Background()
	l, err := newLocker(t, cli, "k", false).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	finish(t, l, 3)
	l, err = newLocker(t, cli, "k", true).Acquire(ctx)
	if err != nil {
		t.Fatalf("after a failure the retry must run, have %v", err)
	}
	finish(t, l, 4)
	_, err = newLocker(t, cli, "k", false).Acquire(ctx)
	var re *lease.ReplayError
	if !errors.As(err, &re) || re.ExitCode != 4 {
		t.Fatalf("want a replay of the published failure 4, have %v", err)
	}
}

func TestHeldWhileInFlight(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	l, err := newLocker(t, cli, "k", false).Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = newLocker(t, cli, "k", false).Acquire(context.Background())
	if !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("want ErrHeld, have %v", err)
	}
	finish(t, l, 0)
}

func TestNoPublishAfterLossOrFence(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	for _, tc := range []struct {
		name    string
		res     lease.Result
		wantErr bool
	}{
		{"lost", lease.Result{Lost: true, ExitCode: 0, Fence: time.Now().Add(time.Minute)}, false},
		{"past fence", lease.Result{PastFence: true, Fence: time.Now().Add(time.Minute)}, true},
		{"fence already passed", lease.Result{Fence: time.Now().Add(-time.Millisecond)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := newLocker(t, cli, tc.name, false).Acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			err = l.Finish(context.Background(), tc.res)
			if tc.wantErr != errors.Is(err, lease.ErrLost) {
				t.Fatalf("want ErrLost %v, have %v", tc.wantErr, err)
			}
			// Nothing published: the retry runs.
			l2, err := newLocker(t, cli, tc.name, false).Acquire(context.Background())
			if err != nil {
				t.Fatalf("want the retry to run, have %v", err)
			}
			finish(t, l2, 1)
		})
	}
}
