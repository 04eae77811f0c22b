package reliability

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// span is one child's hold, from its witness lines. end is 0 while it has
// no stop line (killed): killedAt then bounds it. beat is the last beat of
// the child's escapee (childEscapeEnv), part of the same job.
type span struct {
	id         string
	start, end int64
	beat       int64
	fds        []string
	pid        int
	wall       int64 // wall-clock start, ns
}

// readWitness parses the shared witness log.
func readWitness(t *testing.T, path string) map[string]*span {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return map[string]*span{}
	}
	if err != nil {
		t.Fatal(err)
	}
	spans := map[string]*span{}
	for n, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			t.Fatalf("witness line %d torn: %q", n+1, line)
		}
		ns, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			t.Fatalf("witness line %d: %q: %v", n+1, line, err)
		}
		s := spans[f[1]]
		if s == nil {
			s = &span{id: f[1]}
			spans[f[1]] = s
		}
		switch f[0] {
		case "start":
			if s.start != 0 {
				t.Fatalf("witness: child %s started twice (a re-run of one invocation)", f[1])
			}
			s.start = ns
			for _, kv := range f[3:] {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "fds":
					if v != "" {
						s.fds = strings.Split(v, ",")
					}
				case "pid":
					s.pid, _ = strconv.Atoi(v)
				case "wall":
					s.wall, _ = strconv.ParseInt(v, 10, 64)
				}
			}
		case "stop":
			s.end = ns
		case "beat":
			s.beat = max(s.beat, ns)
		}
	}
	return spans
}

// checkNoOverlap proves that no two holds overlapped: sorted by start,
// each starts after the previous one stopped (its escapee's last beat
// included: the job is everything it started). A span without a stop line
// ends at killedAt[id] (a time taken before the kill was sent, so the
// bound is sound), else it is an open hold and any later start overlaps.
func checkNoOverlap(spans map[string]*span, killedAt map[string]int64) error {
	var list []*span
	for _, s := range spans {
		if s.start == 0 {
			return fmt.Errorf("child %s stopped without a start line", s.id)
		}
		list = append(list, s)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].start < list[j].start })
	for i := 1; i < len(list); i++ {
		prev, cur := list[i-1], list[i]
		end := prev.end
		if end == 0 {
			end = killedAt[prev.id]
		}
		if end != 0 && prev.beat > end {
			end = prev.beat
		}
		if end == 0 || cur.start <= end {
			return fmt.Errorf("two holders at once: %s held [%d, %d] and %s started at %d", prev.id, prev.start, end, cur.id, cur.start)
		}
	}
	return nil
}

// checkFDs fails for a child that inherited a descriptor beyond stdio and
// the lease's own (fd 3 for the kinds that hand one over).
func checkFDs(spans map[string]*span, leaseFD bool) error {
	allowed := map[string]bool{"0": true, "1": true, "2": true}
	if leaseFD {
		allowed["3"] = true
	}
	for _, s := range spans {
		for _, fd := range s.fds {
			if !allowed[fd] {
				return fmt.Errorf("child %s inherited descriptor %s (has %v)", s.id, fd, s.fds)
			}
		}
	}
	return nil
}

func TestWitnessCheckerCatchesOverlap(t *testing.T) {
	spans := map[string]*span{"a": {id: "a", start: 10, end: 20}, "b": {id: "b", start: 15, end: 30}}
	if checkNoOverlap(spans, nil) == nil {
		t.Fatal("want an overlap reported for [10,20] and [15,30]")
	}
	spans["b"].start = 21
	if err := checkNoOverlap(spans, nil); err != nil {
		t.Fatalf("want no overlap, have %v", err)
	}
	spans["a"].end = 0
	if checkNoOverlap(spans, nil) == nil {
		t.Fatal("want an open hold to overlap any later start")
	}
	if err := checkNoOverlap(spans, map[string]int64{"a": 20}); err != nil {
		t.Fatalf("want a killed hold bounded by its kill time, have %v", err)
	}
	spans["a"].end, spans["a"].beat = 20, 22
	if checkNoOverlap(spans, nil) == nil {
		t.Fatal("want an escapee beating at 22 to overlap a start at 21")
	}
	if checkFDs(map[string]*span{"a": {id: "a", fds: []string{"0", "1", "2", "5"}}}, true) == nil {
		t.Fatal("want fd 5 reported as leaked")
	}
}
