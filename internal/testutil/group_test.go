package testutil

import (
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"
)

// A Group's output reaches Lines whole line by line before Done, and a
// signal death is 128+N.
func TestGroupLinesAndSignalCode(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	out := NewLines(func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() })
	cmd := exec.Command("sh", "-c", `echo a; printf b; sleep 0.05; echo c; kill -TERM $$`)
	cmd.Stdout = out
	g := StartGroup(t, cmd)
	select {
	case <-g.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("sh did not exit within 10 s")
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"a", "bc"}; !slices.Equal(lines, want) {
		t.Errorf("want lines %q, have %q", want, lines)
	}
	if out.String() != "a\nbc\n" {
		t.Errorf("want the whole output kept, have %q", out.String())
	}
	if g.Code() != 143 || g.Running() || g.Ended().IsZero() {
		t.Errorf("want code 143, ended; have %d, running %v, ended %v", g.Code(), g.Running(), g.Ended())
	}
}
