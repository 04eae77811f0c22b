package linewriter

import (
	"errors"
	"slices"
	"testing"
)

func TestWholeLinesInOrderAcrossWrites(t *testing.T) {
	var have []string
	w := &Writer{Each: func(l string) error { have = append(have, l); return nil }}
	for _, s := range []string{"a\nb", "c\n", "", "\nd"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if want := []string{"a", "bc", ""}; !slices.Equal(have, want) {
		t.Errorf("want %q (d is partial), have %q", want, have)
	}
}

func TestEachErrorEndsTheWriteAndKeepsTheRest(t *testing.T) {
	boom := errors.New("boom")
	var have []string
	w := &Writer{Each: func(l string) error {
		have = append(have, l)
		if l == "x" {
			return boom
		}
		return nil
	}}
	if _, err := w.Write([]byte("x\ny\n")); err != boom {
		t.Fatalf("want boom, have %v", err)
	}
	w.Write([]byte("z\n"))
	if want := []string{"x", "y", "z"}; !slices.Equal(have, want) {
		t.Errorf("want %q, have %q", want, have)
	}
}
