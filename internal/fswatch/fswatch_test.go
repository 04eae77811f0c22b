package fswatch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// heldBy is a contention error that names its holder's process, as
// lease.HeldError does.
type heldBy struct {
	pid  int
	host string
}

func (h *heldBy) Error() string                { return "held" }
func (h *heldBy) HolderProcess() (int, string) { return h.pid, h.host }

func TestWaitWakesOnAWatchedNameOnly(t *testing.T) {
	dir := t.TempDir()
	w, err := New([]Watch{{Dir: dir, Names: []string{"k.lock"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	os.WriteFile(filepath.Join(dir, "other"), nil, 0o644)
	if woke, err := w.Wait(t.Context(), nil, 50*time.Millisecond); woke || err != nil {
		t.Fatalf("unwatched name: want no wake-up, have %v %v", woke, err)
	}
	// Queued from New on: a change before Wait is not missed.
	os.WriteFile(filepath.Join(dir, "k.lock"), nil, 0o644)
	if woke, err := w.Wait(t.Context(), nil, 10*time.Second); !woke || err != nil {
		t.Fatalf("watched name: want a wake-up, have %v %v", woke, err)
	}
}

func TestWaitWakesWhenALocalHolderExits(t *testing.T) {
	w, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	holder := exec.Command("sleep", "0.2")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	go holder.Wait()
	held := fmt.Errorf("acquire: %w", &heldBy{pid: holder.Process.Pid})
	if woke, err := w.Wait(t.Context(), held, 10*time.Second); !woke || err != nil {
		t.Fatalf("holder exit: want a wake-up, have %v %v", woke, err)
	}
	// A holder on another host is not ours to watch.
	remote := &heldBy{pid: os.Getpid(), host: "elsewhere.invalid"}
	if woke, err := w.Wait(t.Context(), remote, 50*time.Millisecond); woke || err != nil {
		t.Fatalf("remote holder: want a plain timeout, have %v %v", woke, err)
	}
}

func TestWaitReturnsWhenItsContextEnds(t *testing.T) {
	w, err := New([]Watch{{Dir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := w.Wait(ctx, nil, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, have %v", err)
	}
}
