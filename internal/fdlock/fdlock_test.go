package fdlock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestProbe(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "lock")
	if have, _ := Probe(lock, ProbeOpts{}); have != Missing {
		t.Errorf("missing file: want Missing, have %v", have)
	}
	if _, err := os.Stat(lock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the probe created the file: %v", err)
	}
	holder := open(t, lock)
	if have, err := Probe(lock, ProbeOpts{}); have != Free {
		t.Errorf("unlocked file: want Free, have %v (%v)", have, err)
	}
	if err := Flock(holder, unix.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	if have, err := Probe(lock, ProbeOpts{}); have != Held {
		t.Errorf("shared-locked file: want Held, have %v (%v)", have, err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(lock, link); err != nil {
		t.Fatal(err)
	}
	if have, _ := Probe(link, ProbeOpts{NoFollow: true}); have != Unknown {
		t.Errorf("symlink refused: want Unknown, have %v", have)
	}
	if have, _ := Probe(link, ProbeOpts{}); have != Held {
		t.Errorf("symlink followed: want Held, have %v", have)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	if have, _ := Probe(fifo, ProbeOpts{}); have != Unknown {
		t.Errorf("FIFO: want Unknown, have %v", have)
	}
	if have, _ := Probe(dir, ProbeOpts{}); have != Unknown {
		t.Errorf("directory: want Unknown, have %v", have)
	}
}

func TestWaitIsBounded(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "lock")
	holder, waiter := open(t, lock), open(t, lock)
	if err := Flock(holder, unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	waited, err := Wait(context.Background(), waiter, unix.LOCK_EX, 5*time.Millisecond, 50*time.Millisecond, nil)
	if !errors.Is(err, ErrTimeout) || waited < 50*time.Millisecond {
		t.Fatalf("want ErrTimeout after ≥ 50ms, have %v after %v", err, waited)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Wait(ctx, waiter, unix.LOCK_EX, 5*time.Millisecond, time.Minute, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("want the context's error, have %v", err)
	}
	holder.Close() // releases the lock
	if _, err := Wait(context.Background(), waiter, unix.LOCK_EX, 5*time.Millisecond, 10*time.Second, nil); err != nil {
		t.Fatalf("want the lock once the holder closed, have %v", err)
	}
}
