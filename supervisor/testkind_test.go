package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/fswatch"
	"github.com/leasewrap/leasewrap/lease"
)

// fileKind is a small but real lease kind for testing the supervisor: the
// lease is the file <dir>/<key>.lease, created with O_EXCL, holding
// "<holder> <pid>". Anchored mode records the anchor pid; unanchored mode
// also hands over a flock'ed descriptor. Renew fails with ErrLost once the
// file no longer holds our line.
type fileKind struct {
	dir, key, holder string
	anchored         bool
	ttl              time.Duration
	blockRenew       bool // every Renew after the first blocks forever, ignoring its context
	blockFinish      bool // Finish blocks forever, ignoring its context
	ephemeral        bool // the lease hands over no descriptor: only leasewrap keeps it
	// expire makes the TTL real: a lease file whose mtime (its last
	// renewal) is more than ttl old is taken over by the next acquire,
	// as another host would take an expired lease.
	expire bool
}

func (k *fileKind) Kind() string { return "testfile" }
func (k *fileKind) Key() string  { return k.key }
func (k *fileKind) Notify(context.Context) (lease.Wake, error) {
	return fswatch.New([]fswatch.Watch{{Dir: k.dir, Names: []string{k.key + ".lease"}}})
}
func (k *fileKind) path() string { return filepath.Join(k.dir, k.key+".lease") }

func (k *fileKind) Acquire(ctx context.Context) (lease.Lease, error) {
	return k.acquire(ctx, os.Getpid())
}

// anchoredKind is fileKind recording the child's pid (lease.Anchor).
type anchoredKind struct{ *fileKind }

func (k anchoredKind) Holder() string                  { return k.holder }
func (k anchoredKind) Probe(ctx context.Context) error { return nil }
func (k anchoredKind) Started(context.Context, lease.Lease) {
	os.WriteFile(k.path()+".started", nil, 0o644)
}
func (k anchoredKind) AcquireAnchored(ctx context.Context, pid int) (lease.Lease, error) {
	if os.Getenv("T_TERM_AT_ANCHOR") == "1" {
		// A shutdown that lands after the child exists, before
		// supervision: acquisition's signal watcher takes it.
		unix.Kill(os.Getpid(), unix.SIGTERM)
		time.Sleep(200 * time.Millisecond)
	}
	return k.acquire(ctx, pid)
}

func (k *fileKind) acquire(ctx context.Context, pid int) (lease.Lease, error) {
	line := fmt.Sprintf("%s %d", k.holder, pid)
	if fi, err := os.Stat(k.path()); err == nil && k.expire && k.ttl > 0 && time.Since(fi.ModTime()) > k.ttl {
		os.Remove(k.path()) // expired: the lease is anybody's
	}
	f, err := os.OpenFile(k.path(), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		held, _ := os.ReadFile(k.path())
		return nil, &lease.HeldError{Kind: k.Kind(), Key: k.key, Holder: strings.TrimSpace(string(held))}
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return nil, err
	}
	l := &fileLease{k: k, line: line}
	if k.anchored || k.ephemeral {
		f.Close()
		return plainLease{l}, nil
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	l.f = f
	return l, nil
}

type fileLease struct {
	k       *fileKind
	line    string
	f       *os.File
	renewed bool
}

func (l *fileLease) File() *os.File { return l.f }

// plainLease hides fileLease's File: an anchored lease hands over no
// descriptor, and one that only leasewrap keeps alive neither.
type plainLease struct{ l *fileLease }

func (p plainLease) Holder() string                                   { return p.l.Holder() }
func (p plainLease) Done() <-chan struct{}                            { return nil }
func (p plainLease) Env() []string                                    { return p.l.Env() }
func (p plainLease) TTL() time.Duration                               { return p.l.TTL() }
func (p plainLease) Renew(ctx context.Context) error                  { return p.l.Renew(ctx) }
func (p plainLease) Finish(ctx context.Context, r lease.Result) error { return p.l.Finish(ctx, r) }
func (l *fileLease) Holder() string                                   { return l.k.holder }
func (l *fileLease) Done() <-chan struct{}                            { return nil }
func (l *fileLease) Env() []string {
	if l.k.anchored {
		return nil
	}
	return []string{"LEASEWRAP_TEST_EXTRA=yes"}
}
func (l *fileLease) TTL() time.Duration { return l.k.ttl }

func (l *fileLease) ours() bool {
	b, err := os.ReadFile(l.k.path())
	return err == nil && string(b) == l.line
}

func (l *fileLease) Renew(ctx context.Context) error {
	if l.k.blockRenew && l.renewed {
		select {} // a renameat held in the kernel: ignores ctx
	}
	l.renewed = true
	if !l.ours() {
		return fmt.Errorf("%s: %w", l.k.path(), lease.ErrLost)
	}
	if l.k.expire {
		now := time.Now()
		return os.Chtimes(l.k.path(), now, now)
	}
	return nil
}

func (l *fileLease) Finish(ctx context.Context, res lease.Result) error {
	if l.k.blockFinish {
		os.WriteFile(l.k.path()+".finishing", nil, 0o644)
		select {} // a mkdir held in the kernel: ignores ctx
	}
	if l.f != nil {
		defer l.f.Close()
	}
	ours := l.ours()
	if ours {
		os.Remove(l.k.path())
	}
	os.WriteFile(l.k.path()+".result", []byte(strconv.Itoa(res.ExitCode)+" lost="+strconv.FormatBool(res.Lost)+pastFence(res)+forwarded(res)), 0o644)
	if res.PastFence && !ours {
		return fmt.Errorf("%s past its fence: %w", l.k.path(), lease.ErrLost)
	}
	return nil
}

func forwarded(res lease.Result) string {
	if res.Forwarded != 0 {
		return " forwarded=" + strconv.Itoa(int(res.Forwarded))
	}
	return ""
}

func pastFence(res lease.Result) string {
	if res.PastFence {
		return " pastfence"
	}
	return ""
}
