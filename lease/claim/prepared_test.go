package claim

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/lease/leasetest"
)

// TestSimultaneousAcquireWithPreparedFiles: waiters whose claim file was
// prepared while waiting (an unnamed file linked at the claim's path) race
// processes that create the seed's temp file: exactly one wins, every
// loser names it, and nothing but the claim is left in the directory.
func TestSimultaneousAcquireWithPreparedFiles(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(claimsDir(root), dirMode); err != nil {
		t.Fatal(err)
	}
	outs := runHelpers(t, 8, root, func(i int) []string {
		verb := "acquire"
		if i%2 == 0 {
			verb = "acquire-prepared"
		}
		return []string{verb, root, fmt.Sprintf("pty:w%d", i)}
	})
	winner := oneWinner(t, outs)
	if rec := readClaim(t, root, "session:race"); rec.Holder != winner {
		t.Errorf("file holder %s, want %s", rec.Holder, winner)
	}
	want := filepath.Base(claimFile(root, "session:race"))
	if have := testutil.DirNames(t, claimsDir(root)); len(have) != 1 || have[0] != want {
		t.Errorf("want only %s in the claims directory, have %v", want, have)
	}
}

// TestPreparedClaimWaiterKilledLeavesNothing: a waiter SIGKILLed while it
// holds its prepared claim file leaves nothing in the claims directory.
func TestPreparedClaimWaiterKilledLeavesNothing(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(claimsDir(root), dirMode); err != nil {
		t.Fatal(err)
	}
	goFile := filepath.Join(t.TempDir(), "go")
	os.WriteFile(goFile, nil, 0o644)
	cmd := exec.Command(os.Args[0], "-test.run=^$", goFile, "prepare-and-die", root, "pty:dies")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	cmd.Dir = root
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
		t.Fatalf("want the helper killed, have %v", err)
	}
	if have := testutil.DirNames(t, claimsDir(root)); len(have) != 0 {
		t.Errorf("want an empty claims directory, have %v", have)
	}
}

// TestPreparedClaimIsTheSeedsFile: the claim linked from a prepared file
// is the record marshalRecord writes, and a
// prepared file that met a held claim is kept (emptied) for the next
// attempt.
func TestPreparedClaimIsTheSeedsFile(t *testing.T) {
	root := t.TempDir()
	env := testEnv(nil)
	other := New(Options{Root: root, EventsDir: root, Getenv: env})
	if _, err := other.Acquire(context.Background(), "node:k", "pty:other", AcquireOptions{PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	l, err := NewLocker(LockerConfig{Key: "node:k", Holder: "pty:me", Root: root, EventsDir: root, Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	leasetest.Waited(t, l)
	if _, err := l.AcquireAnchored(ctx, os.Getpid()); err == nil {
		t.Fatal("want the live claim held")
	}
	if !l.prep.ready() {
		t.Fatal("want the prepared file kept after a held attempt")
	}
	if fi, _ := l.prep.f.Stat(); fi.Size() != 0 {
		t.Errorf("want the kept file emptied, have %d bytes", fi.Size())
	}
	if err := other.Release(ctx, "node:k", "pty:other"); err != nil {
		t.Fatal(err)
	}
	ls, err := l.AcquireAnchored(ctx, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if l.prep != nil {
		t.Error("want the prepared file used up")
	}
	c := ls.(*claimLease)
	rec, err := readClaimFile(c.path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := marshalRecord(rec)
	have, _ := os.ReadFile(c.path)
	if string(have) != string(want) {
		t.Errorf("want the claim file byte for byte\n%s\nhave\n%s", want, have)
	}
	if err := ls.Finish(ctx, lease.Result{}); err != nil {
		t.Fatal(err)
	}
}

// TestFinishRecognizesItsClaimByItsBytes: Finish removes the claim whose
// file still holds the bytes this run wrote, and leaves one another
// holder has written over it (a reclaim while the pid was dead).
func TestFinishRecognizesItsClaimByItsBytes(t *testing.T) {
	for _, replaced := range []bool{false, true} {
		root := t.TempDir()
		l, err := NewLocker(LockerConfig{Key: "node:k", Holder: "pty:me", Root: root, EventsDir: root, Getenv: testEnv(nil)})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		ls, err := l.AcquireAnchored(ctx, os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		c := ls.(*claimLease)
		if c.wrote == nil {
			t.Fatal("want the written bytes kept")
		}
		if replaced {
			rec := readClaim(t, root, "node:k")
			rec.Holder = "pty:other"
			b, _ := marshalRecord(rec)
			if err := atomicReplace(c.path, b); err != nil {
				t.Fatal(err)
			}
		}
		if err := ls.Finish(ctx, lease.Result{}); err != nil {
			t.Fatal(err)
		}
		_, err = os.Stat(c.path)
		if replaced && err != nil {
			t.Errorf("want another holder's claim left in place, have %v", err)
		}
		if !replaced && err == nil {
			t.Error("want our claim removed")
		}
	}
}
