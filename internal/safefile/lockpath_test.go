package safefile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/fdlock"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

func TestLockPathRefusesPlantedFilesAndBoundsItsWait(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("v"), 0o600)
	for name, plant := range testutil.Plants() {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name+".lock")
			if err := plant(victim, p); err != nil {
				t.Fatal(err)
			}
			l, err := LockPath(t.Context(), p, false, 0o666, time.Millisecond, 5*time.Second)
			var ue *UnsafeError
			if !errors.As(err, &ue) {
				if l != nil {
					l.Close()
				}
				t.Fatalf("want an *UnsafeError, have %v", err)
			}
		})
	}
	if b, _ := os.ReadFile(victim); string(b) != "v" {
		t.Errorf("victim changed: %q", b)
	}

	p := filepath.Join(dir, "k.lock")
	held, err := LockPath(t.Context(), p, false, 0o666, time.Millisecond, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := LockPath(t.Context(), p, true, 0o666, time.Millisecond, 20*time.Millisecond); !errors.Is(err, fdlock.ErrTimeout) {
		t.Errorf("held: want fdlock.ErrTimeout, have %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := LockPath(ctx, p, false, 0o666, time.Millisecond, time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: want context.Canceled, have %v", err)
	}
	held.Close()
	l, err := LockPath(t.Context(), p, true, 0o666, time.Millisecond, time.Second)
	if err != nil {
		t.Fatalf("released: want the lock, have %v", err)
	}
	l.Close()
}
