package slots

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/leasewrap/leasewrap/lease"
)

// EnvSlot is the environment variable that tells the command its slot.
const EnvSlot = "LEASEWRAP_SLOT"

// Locker holds one of its slots. It is a lease.Locker whose Kind and Key
// are slot 0's.
type Locker struct {
	slots []lease.Locker
}

// New returns a Locker over slots (at least one; slot i is slots[i]).
func New(slots []lease.Locker) (*Locker, error) {
	if len(slots) == 0 {
		return nil, errors.New("slots: no slot")
	}
	return &Locker{slots: slots}, nil
}

// Kind is slot 0's kind.
func (l *Locker) Kind() string { return l.slots[0].Kind() }

// Key is slot 0's key: the key the user gave.
func (l *Locker) Key() string { return l.slots[0].Key() }

// Holder is slot 0's holder if known before acquiring, else ""; all slots use it.
func (l *Locker) Holder() string {
	if id, ok := l.slots[0].(lease.Identity); ok {
		return id.Holder()
	}
	return ""
}

var _ lease.Identity = (*Locker)(nil)

// Acquire tries each slot once, in order, returning the first taken. All held
// is a *HeldError (matching lease.ErrHeld); any other slot error ends the attempt.
func (l *Locker) Acquire(ctx context.Context) (lease.Lease, error) {
	held := &HeldError{}
	for i, s := range l.slots {
		ls, err := s.Acquire(ctx)
		if err == nil {
			return wrap(ls, i), nil
		}
		if !errors.Is(err, lease.ErrHeld) {
			return nil, fmt.Errorf("slot %d: %w", i, err)
		}
		held.Slots = append(held.Slots, err)
	}
	return nil, held
}

// HeldError reports every slot held; Slots[i] is slot i's contention error.
type HeldError struct{ Slots []error }

func (e *HeldError) Error() string {
	s := fmt.Sprintf("all %d slots are held", len(e.Slots))
	for i, err := range e.Slots {
		s += fmt.Sprintf("; slot %d: %v", i, err)
	}
	return s
}

// Is makes errors.Is(err, lease.ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == lease.ErrHeld }

// Unwrap is the contention errors of the slots.
func (e *HeldError) Unwrap() []error { return e.Slots }

// Lease is a held slot: its own lease plus LEASEWRAP_SLOT.
type Lease struct {
	lease.Lease
	Slot int
}

// Env is the slot lease's environment and LEASEWRAP_SLOT.
func (s *Lease) Env() []string {
	return append(s.Lease.Env(), EnvSlot+"="+strconv.Itoa(s.Slot))
}

// LossCause is the slot lease's, if it tells one.
func (s *Lease) LossCause() error {
	if c, ok := s.Lease.(lease.LossCause); ok {
		return c.LossCause()
	}
	return nil
}

// fileLease is a held slot whose lease is kept by a locked descriptor.
type fileLease struct {
	*Lease
	f lease.FileHolder
}

func (s *fileLease) File() *os.File { return s.f.File() }

// wrap is ls as slot i, keeping its optional FileHolder.
func wrap(ls lease.Lease, i int) lease.Lease {
	s := &Lease{Lease: ls, Slot: i}
	if f, ok := ls.(lease.FileHolder); ok {
		return &fileLease{Lease: s, f: f}
	}
	return s
}
