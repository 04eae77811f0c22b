package randbytes

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestReadFillsTheWholeBuffer(t *testing.T) {
	// 64 reads of 32 bytes: with a real source, no two are equal and none
	// keeps a zero byte in every position of its buffer.
	seen := map[string]bool{}
	zero := make([]int, 32)
	for i := 0; i < 64; i++ {
		b := make([]byte, 32)
		if err := Read(b); err != nil {
			t.Fatal(err)
		}
		if seen[string(b)] {
			t.Fatalf("read %d repeats an earlier one: %x", i, b)
		}
		seen[string(b)] = true
		for j, c := range b {
			if c == 0 {
				zero[j]++
			}
		}
	}
	for j, n := range zero {
		if n == 64 {
			t.Fatalf("byte %d was never written", j)
		}
	}
	if err := Read(nil); err != nil {
		t.Errorf("empty buffer: want nil, have %v", err)
	}
}

// TestReadRetriesShortReadsAndEINTR drives read with a getrandom that
// answers a few bytes at a time, interrupted in between.
func TestReadRetriesShortReadsAndEINTR(t *testing.T) {
	calls, next := 0, byte(1)
	b := make([]byte, 10)
	err := read(b, func(p []byte, flags int) (int, error) {
		calls++
		if flags != 0 {
			t.Errorf("flags: want 0, have %d", flags)
		}
		if calls%2 == 1 {
			return -1, unix.EINTR
		}
		n := min(3, len(p))
		for i := range n {
			p[i] = next
			next++
		}
		return n, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; !bytes.Equal(b, want) {
		t.Errorf("want %v, have %v", want, b)
	}
	if calls != 8 {
		t.Errorf("want 8 calls (4 interrupted, 4 short reads), have %d", calls)
	}
}

func TestReadReturnsTheFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func([]byte, int) (int, error)
		want string
	}{
		{"error", func([]byte, int) (int, error) { return -1, unix.EFAULT }, "getrandom: bad address"},
		{"no progress", func([]byte, int) (int, error) { return 0, nil }, "getrandom returned 0 bytes of 4"},
	} {
		err := read(make([]byte, 4), tc.fn)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want an error with %q, have %v", tc.name, tc.want, err)
		}
	}
	err := read(make([]byte, 4), func([]byte, int) (int, error) { return -1, unix.EFAULT })
	if !errors.Is(err, unix.EFAULT) {
		t.Errorf("want the errno wrapped, have %v", err)
	}
}

// TestReadFallsBackToURandom checks the path of a kernel without
// getrandom(2).
func TestReadFallsBackToURandom(t *testing.T) {
	b := make([]byte, 64)
	if err := read(b, func([]byte, int) (int, error) { return -1, unix.ENOSYS }); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(b, make([]byte, 64)) {
		t.Error("/dev/urandom gave 64 zero bytes")
	}
}

func TestReader(t *testing.T) {
	b := make([]byte, 16)
	if n, err := io.ReadFull(Reader, b); n != 16 || err != nil {
		t.Fatalf("want 16, nil; have %d, %v", n, err)
	}
}
