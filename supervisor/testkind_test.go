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
}

func (k *fileKind) Kind() string   { return "testfile" }
func (k *fileKind) Key() string    { return k.key }
func (k *fileKind) Holder() string { return k.holder }
func (k *fileKind) Anchored() bool { return k.anchored }
func (k *fileKind) Watches() []lease.Watch {
	return []lease.Watch{{Dir: k.dir, Names: []string{k.key + ".lease"}}}
}
func (k *fileKind) path() string { return filepath.Join(k.dir, k.key+".lease") }

func (k *fileKind) Acquire(ctx context.Context, pid int) (lease.Lease, error) {
	if pid == 0 {
		pid = os.Getpid()
	}
	line := fmt.Sprintf("%s %d", k.holder, pid)
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
	if k.anchored {
		f.Close()
	} else {
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			return nil, err
		}
		l.f = f
	}
	return l, nil
}

type fileLease struct {
	k    *fileKind
	line string
	f    *os.File
}

func (l *fileLease) File() *os.File { return l.f }
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
	if !l.ours() {
		return fmt.Errorf("%s: %w", l.k.path(), lease.ErrLost)
	}
	return nil
}

func (l *fileLease) Finish(ctx context.Context, res lease.Result) error {
	if l.f != nil {
		defer l.f.Close()
	}
	if l.ours() {
		os.Remove(l.k.path())
	}
	os.WriteFile(l.k.path()+".result", []byte(strconv.Itoa(res.ExitCode)+" lost="+strconv.FormatBool(res.Lost)), 0o644)
	return nil
}
