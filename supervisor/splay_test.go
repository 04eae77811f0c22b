package supervisor

import (
	"fmt"
	"testing"
	"time"
)

func TestSplayOffset(t *testing.T) {
	const d = time.Hour
	if have := SplayOffset("h", "flock", "k", 0); have != 0 {
		t.Fatalf("no splay: want 0, have %v", have)
	}
	if a, b := SplayOffset("h", "flock", "k", d), SplayOffset("h", "flock", "k", d); a != b {
		t.Fatalf("want the same offset for the same host and key, have %v and %v", a, b)
	}
	// A fleet of 100 hosts: every offset in [0, d), every quarter used.
	var quarters [4]int
	for i := range 100 {
		off := SplayOffset(fmt.Sprintf("host-%d", i), "lock", "nightly", d)
		if off < 0 || off >= d {
			t.Fatalf("host-%d: want an offset in [0, %v), have %v", i, d, off)
		}
		quarters[off*4/d]++
	}
	for q, n := range quarters {
		if n < 10 {
			t.Fatalf("want the fleet spread over the splay, have %d of 100 hosts in quarter %d (%v)", n, q, quarters)
		}
	}
}
