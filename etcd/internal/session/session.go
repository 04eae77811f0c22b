// Package session is the etcd lease both distributed kinds hold: granted
// once, kept alive by one KeepAliveOnce per renewal attempt (never by a
// background loop that could renew behind the fence), watched through the
// holder's own key so that a deletion or revocation is loss at once, and
// never renewed again once it is closed. It records the monotonic start of
// the request that last extended the lease (the grant or a keep-alive), so
// that the supervisor can count a fence from it (lease.Confirmed).
package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasewrap/leasewrap/etcd/conn"
	"github.com/leasewrap/leasewrap/lease"
)

// Session is one etcd lease. Renew, Watch and Close may be called from
// different goroutines.
type Session struct {
	cli *clientv3.Client
	id  clientv3.LeaseID
	ttl time.Duration

	mu        sync.Mutex
	closed    bool      // no renewal after Close, ever
	confirmed time.Time // start of the latest request that extended the lease
	lost      chan struct{}
	cause     error // why lost closed (set before it closes)
	once      sync.Once
	stop      context.CancelFunc
	wg        sync.WaitGroup
}

// Grant asks for a lease of ttl (whole seconds) and keeps the TTL the
// server grants (it may raise a small one).
func Grant(ctx context.Context, cli *clientv3.Client, ttl time.Duration) (*Session, error) {
	secs := int64(ttl / time.Second)
	if secs < 1 {
		secs = 1
	}
	sent := time.Now() // before the request: the lease runs from no earlier
	resp, err := cli.Grant(ctx, secs)
	if err != nil {
		return nil, conn.Classify(fmt.Errorf("grant a %ds lease: %w", secs, err))
	}
	return &Session{
		cli:       cli,
		id:        resp.ID,
		ttl:       time.Duration(resp.TTL) * time.Second,
		lost:      make(chan struct{}),
		stop:      func() {},
		confirmed: sent,
	}, nil
}

// ConfirmedAt is the monotonic start of the latest request that extended
// the lease by its TTL: the grant, or a keep-alive (Renew, KeepAlive)
// whose answer granted a TTL. The server extended it after that instant,
// so the lease lives at least until ConfirmedAt + TTL (lease.Confirmed).
func (s *Session) ConfirmedAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confirmed
}

// keepAliveOnce sends one keep-alive and, when its answer grants a TTL,
// records the request's start as the latest confirmation. It returns the
// answer's error, rpctypes.ErrLeaseNotFound for an answer without TTL.
func (s *Session) keepAliveOnce(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.AttemptTimeout())
	defer cancel()
	sent := time.Now() // before the request, never the answer's time
	resp, err := s.cli.KeepAliveOnce(ctx, s.id)
	if err != nil {
		return err
	}
	if resp.TTL <= 0 {
		return rpctypes.ErrLeaseNotFound
	}
	s.mu.Lock()
	if sent.After(s.confirmed) {
		s.confirmed = sent
	}
	s.mu.Unlock()
	return nil
}

// ID is the lease id.
func (s *Session) ID() clientv3.LeaseID { return s.id }

// Hex is the lease id as etcdctl writes it in a lock key (%x).
func (s *Session) Hex() string { return fmt.Sprintf("%x", int64(s.id)) }

// TTL is the TTL the server granted.
func (s *Session) TTL() time.Duration { return s.ttl }

// AttemptTimeout bounds one keep-alive request: a sixth of the TTL (half
// the default renewal period), at least 300 ms and at most 5 s, so one
// request stuck on a dead member leaves time for retries before the fence.
func (s *Session) AttemptTimeout() time.Duration {
	return min(max(s.ttl/6, 300*time.Millisecond), 5*time.Second)
}

// Renew sends one keep-alive. An expired or revoked lease, a closed
// session and a lease whose key was seen deleted are errors matching
// lease.ErrLost; anything else is transient.
func (s *Session) Renew(ctx context.Context) error {
	if s.isClosed() {
		return fmt.Errorf("etcd lease %s: closed, not renewed again: %w", s.Hex(), lease.ErrLost)
	}
	select {
	case <-s.lost:
		return fmt.Errorf("etcd lease %s: its key was deleted: %w", s.Hex(), lease.ErrLost)
	default:
	}
	err := s.keepAliveOnce(ctx)
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return fmt.Errorf("etcd lease %s: expired or revoked: %w", s.Hex(), lease.ErrLost)
	}
	if err != nil {
		return fmt.Errorf("etcd lease %s: keep-alive: %w", s.Hex(), err)
	}
	return nil
}

// KeepAlive sends one keep-alive before the lease is held (while
// queueing), regardless of Close and of the watch.
func (s *Session) KeepAlive(ctx context.Context) error {
	err := s.keepAliveOnce(ctx)
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return fmt.Errorf("etcd lease %s: expired while queueing: %w", s.Hex(), lease.ErrLost)
	}
	return err
}

// Lost is closed when the watched key was deleted (or the lease revoked,
// which deletes it).
func (s *Session) Lost() <-chan struct{} { return s.lost }

// Watch watches key from revision rev on and closes Lost when it is
// deleted, or recreated with another create revision. Watch is called at
// most once.
func (s *Session) Watch(key string, rev, createRev int64) {
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(context.Background()))
	s.mu.Lock()
	s.stop = cancel
	s.mu.Unlock()
	s.wg.Add(1)
	go func() { // stopped by Close, which waits for it
		defer s.wg.Done()
		next := rev
		for ctx.Err() == nil {
			for wr := range s.cli.Watch(ctx, key, clientv3.WithRev(next)) {
				if wr.CompactRevision != 0 {
					// History compacted past next: look at the key itself.
					if s.gone(ctx, key, createRev) {
						s.markLost(fmt.Errorf("etcd lease %s: its key %s is gone or was created again (seen after a compaction)", s.Hex(), key))
						return
					}
					next = wr.CompactRevision
				}
				for _, ev := range wr.Events {
					switch {
					case ev.Type == mvccpb.DELETE:
						s.markLost(fmt.Errorf("etcd lease %s: its key %s was deleted at revision %d (the lease revoked or expired, or the key removed)", s.Hex(), key, ev.Kv.ModRevision))
						return
					case ev.Kv.CreateRevision != createRev:
						s.markLost(fmt.Errorf("etcd lease %s: its key %s was created again by another at revision %d", s.Hex(), key, ev.Kv.CreateRevision))
						return
					}
				}
				if wr.Header.Revision >= next {
					next = wr.Header.Revision + 1
				}
			}
			// The watch ended (no leader, compaction): look, then watch
			// again from where it stopped, after a short pause.
			if ctx.Err() == nil && s.gone(ctx, key, createRev) {
				s.markLost(fmt.Errorf("etcd lease %s: its key %s is gone or was created again", s.Hex(), key))
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
}

// gone reports whether key no longer exists with createRev. An error
// reading it is not proof of loss (renewal decides then).
func (s *Session) gone(ctx context.Context, key string, createRev int64) bool {
	gctx, cancel := context.WithTimeout(ctx, s.AttemptTimeout())
	defer cancel()
	resp, err := s.cli.Get(gctx, key)
	if err != nil {
		return false
	}
	return len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != createRev
}

// markLost closes Lost with cause (matching lease.ErrLost) as the reason.
func (s *Session) markLost(cause error) {
	s.once.Do(func() {
		s.cause = fmt.Errorf("%w: %w", lease.ErrLost, cause)
		close(s.lost)
	})
}

// LossCause is why Lost closed, once it has (nil before): the watched
// key's deletion or replacement, matching lease.ErrLost.
func (s *Session) LossCause() error {
	select {
	case <-s.lost:
		return s.cause
	default:
		return nil
	}
}

func (s *Session) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops renewal for good and stops the watch. It does not revoke.
func (s *Session) Close() {
	s.mu.Lock()
	s.closed = true
	stop := s.stop
	s.mu.Unlock()
	stop()
	s.wg.Wait()
}

// Revoke closes the session and revokes the lease, best effort, under ctx
// (a fresh context from the caller, bounded). It deletes every key
// attached to the lease.
func (s *Session) Revoke(ctx context.Context) error {
	s.Close()
	ctx, cancel := context.WithTimeout(ctx, max(s.AttemptTimeout(), 2*time.Second))
	defer cancel()
	if _, err := s.cli.Revoke(ctx, s.id); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return fmt.Errorf("revoke etcd lease %s: %w", s.Hex(), err)
	}
	return nil
}

// Client is the etcd client the session uses.
func (s *Session) Client() *clientv3.Client { return s.cli }
