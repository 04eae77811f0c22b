package slots

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/leasewrap/leasewrap/lease"
	"github.com/leasewrap/leasewrap/lease/flock"
)

// TestSlotsOfFlocks: three flock slots hold three leases, in order, each
// handing its own descriptor on and telling its slot; a fourth attempt
// finds every slot held, and a released slot is the next one taken.
func TestSlotsOfFlocks(t *testing.T) {
	dir := t.TempDir()
	var ls []lease.Locker
	for _, name := range []string{"p.lock", "p.lock.1", "p.lock.2"} {
		l, err := flock.NewLocker(flock.Config{Path: filepath.Join(dir, name), Holder: "h"})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ls = append(ls, l)
	}
	l, err := New(ls)
	if err != nil {
		t.Fatal(err)
	}
	if l.Key() != ls[0].Key() || l.Kind() != "flock" {
		t.Fatalf("want slot 0's kind and key, have %s %s", l.Kind(), l.Key())
	}
	ctx := context.Background()
	var held []lease.Lease
	for i := range 3 {
		ls, err := l.Acquire(ctx)
		if err != nil {
			t.Fatalf("slot %d: %v", i, err)
		}
		if want := EnvSlot + "=" + string(rune('0'+i)); !slices.Contains(ls.Env(), want) {
			t.Fatalf("want %s in %q", want, ls.Env())
		}
		f, ok := ls.(lease.FileHolder)
		if !ok || f.File() == nil || f.File().Name() != filepath.Join(dir, []string{"p.lock", "p.lock.1", "p.lock.2"}[i]) {
			t.Fatalf("slot %d: want its own locked descriptor handed on, have %v", i, ok)
		}
		held = append(held, ls)
	}
	_, err = l.Acquire(ctx)
	var all *HeldError
	if !errors.Is(err, lease.ErrHeld) || !errors.As(err, &all) || len(all.Slots) != 3 {
		t.Fatalf("all held: want a *HeldError of 3 slots matching lease.ErrHeld, have %v", err)
	}
	if err := held[1].Finish(ctx, lease.Result{}); err != nil {
		t.Fatal(err)
	}
	again, err := l.Acquire(ctx)
	if err != nil || !slices.Contains(again.Env(), EnvSlot+"=1") {
		t.Fatalf("want the released slot 1 taken again, have %v, %v", err, again)
	}
	for _, ls := range []lease.Lease{held[0], held[2], again} {
		ls.Finish(ctx, lease.Result{})
	}
}
