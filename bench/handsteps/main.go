// Command handsteps breaks a hand-over down into its steps: it runs
// hand-overs of one kind (a holder whose child exits, a --wait waiter
// whose child prints a line), traces every system call and process event
// of both process trees through a private tracefs instance (about 1 µs an
// event, so the steps keep their own speed, unlike under strace), and
// prints when each step happened after the release, median and p90 over
// the rounds. It needs root (tracefs) and x86-64 (system call numbers).
//
//	go -C bench run ./handsteps -kind session -n 20
//
// Kinds: claim, session, flock (the flock kind), flock1 (flock(1) behind
// flock(1), the baseline). bench/LOG.md has the budgets it measured.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// x86-64 system call numbers of the steps.
var sysName = map[int]string{1: "write", 18: "pwrite64", 61: "wait4", 73: "flock", 74: "fsync", 101: "ptrace",
	257: "openat", 258: "mkdirat", 263: "unlinkat", 264: "renameat", 265: "linkat", 271: "ppoll", 435: "clone3"}

// step is one milestone: the first event after the previous step of the
// process tree role (H holder, Hc its job, W waiter, Wc its job) that is
// the system call (at its exit) or the process event name and matches.
type step struct {
	label, role, name string
	match             func(args []string, ret string) bool
}

func always(_ []string, _ string) bool { return true }
func arg(i int, v string) func([]string, string) bool {
	return func(a []string, _ string) bool { return len(a) > i && a[i] == v }
}
func okRet(_ []string, r string) bool { return r == "0" }
func child(_ []string, r string) bool { return r != "" && r != "0" && !strings.HasPrefix(r, "-") }
func jobExit(a []string, _ string) bool {
	return len(a) > 0 && strings.Contains(strings.Join(a, " "), "comm=sh")
}

var steps = map[string][]step{
	"session": {
		{"job exits", "Hc", "sched_process_exit", jobExit},
		{"holder reaps it", "H", "wait4", child},
		{"holder removes its record", "H", "unlinkat", arg(2, "0")},
		{"waiter wakes", "W", "ppoll", always},
		{"coordinator locked", "W", "flock", arg(1, "6")},
		{"record written (prepared file)", "W", "pwrite64", always},
		{"temp record created (seed's path)", "W", "openat", arg(2, "a00c2")},
		{"fsync done", "W", "fsync", always},
		{"record linked (prepared file)", "W", "linkat", okRet},
		{"record renamed (seed's path)", "W", "renameat", okRet},
		{"coordinator dropped", "W", "flock", arg(1, "8")},
		{"job started (clone3)", "W", "clone3", child},
		{"job writes", "Wc", "write", arg(0, "1")},
	},
	"claim": {
		{"job exits", "Hc", "sched_process_exit", jobExit},
		{"holder reaps it", "H", "wait4", child},
		{"holder's recovery mutex made", "H", "mkdirat", okRet},
		{"holder removes its claim", "H", "unlinkat", arg(2, "0")},
		{"waiter links its claim", "W", "linkat", okRet},
		{"stopped job released", "W", "ptrace", arg(0, "11")},
		{"job writes", "Wc", "write", arg(0, "1")},
	},
	"flock": {
		{"job exits", "Hc", "sched_process_exit", jobExit},
		{"holder reaps it", "H", "wait4", child},
		{"waiter granted", "W", "flock", okRet},
		{"job started (clone3)", "W", "clone3", child},
		{"job writes", "Wc", "write", arg(0, "1")},
	},
	"flock1": {
		{"job exits", "Hc", "sched_process_exit", jobExit},
		{"holder exits", "H", "sched_process_exit", always},
		{"waiter granted", "W", "flock", okRet},
		{"job writes", "Wc", "write", arg(0, "1")},
	},
}

func main() {
	bin := flag.String("bin", "out/leasewrap", "leasewrap binary (default: make bench's, from bench/)")
	kind := flag.String("kind", "session", "claim, session, flock or flock1")
	n := flag.Int("n", 20, "hand-overs")
	flag.Parse()
	ms, ok := steps[*kind]
	if !ok {
		fatal(fmt.Errorf("unknown kind %q", *kind))
	}
	dir, err := os.MkdirTemp("", "handsteps-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(dir)
	inst := fmt.Sprintf("/sys/kernel/tracing/instances/handsteps-%d", os.Getpid())
	if err := os.Mkdir(inst, 0o755); err != nil {
		fatal(fmt.Errorf("tracefs (root needed): %w", err))
	}
	defer os.Remove(inst)
	tw := func(file, v string) {
		if err := os.WriteFile(filepath.Join(inst, file), []byte(v), 0o644); err != nil {
			fatal(fmt.Errorf("tracefs %s: %w", file, err))
		}
	}
	tw("buffer_size_kb", "16384")
	tw("options/event-fork", "1")
	tw("options/record-tgid", "1")
	tw("set_event", "raw_syscalls:sys_enter raw_syscalls:sys_exit sched:sched_process_exit sched:sched_process_fork")
	tw("tracing_on", "1")
	defer tw("tracing_on", "0")
	marker, err := os.OpenFile(filepath.Join(inst, "trace_marker"), os.O_WRONLY, 0)
	if err != nil {
		fatal(err)
	}
	pidFile := filepath.Join(inst, "set_event_pid")
	env := append(os.Environ(), "FNO_EVENTS_PATH="+filepath.Join(dir, "events.jsonl"), "LEASEWRAP_LOG_FORMAT=text")
	for r := 1; r <= *n; r++ {
		holder, waiter := argv(*bin, *kind, dir, r)
		if err := round(r, holder, waiter, *kind, pidFile, marker, env); err != nil {
			fmt.Fprintf(os.Stderr, "handsteps: round %d: %v\n", r, err)
		}
	}
	tw("tracing_on", "0")
	f, err := os.Open(filepath.Join(inst, "trace"))
	if err != nil {
		fatal(err)
	}
	rounds := parse(f)
	f.Close()
	tw("set_event", "")
	report(*kind, ms, rounds)
}

// argv returns the holder's and the waiter's command lines (without their
// children) for round r.
func argv(bin, kind, dir string, r int) (holder, waiter []string) {
	switch kind {
	case "session":
		holder = []string{bin, "session", "run", fmt.Sprintf("5f0c6d4e-3b1a-4f59-9b8e-%012x", r), "--root", filepath.Join(dir, "s"), "--epoch", "6"}
	case "claim":
		holder = []string{bin, "claim", "run", fmt.Sprintf("bench:k%d", r), "--root", filepath.Join(dir, "c")}
	case "flock":
		holder = []string{bin, "flock", "run", filepath.Join(dir, fmt.Sprintf("f%d.lock", r))}
	case "flock1":
		lock := filepath.Join(dir, fmt.Sprintf("f%d.lock", r))
		return []string{"flock", lock}, []string{"flock", "-w", "30", lock}
	}
	return append(holder, "--"), append(holder[:len(holder):len(holder)], "--wait", "30s", "--")
}

// round runs one hand-over; each process adds itself to the traced pids
// (set_event_pid, children follow) before it execs.
func round(r int, holder, waiter []string, kind, pidFile string, marker io.Writer, env []string) error {
	traced := func(argv ...string) *exec.Cmd {
		c := exec.Command("sh", append([]string{"-c", `echo $$ >> "$0" && exec "$@"`, pidFile}, argv...)...)
		c.Env = env
		return c
	}
	h := traced(append(holder, "sh", "-c", "echo up; cat >/dev/null; exit 1")...)
	hin, _ := h.StdinPipe()
	hout, _ := h.StdoutPipe()
	if err := h.Start(); err != nil {
		return err
	}
	defer h.Wait()
	defer hin.Close()
	if l, _ := bufio.NewReader(hout).ReadString('\n'); !strings.HasPrefix(l, "up") {
		return fmt.Errorf("holder said %q", l)
	}
	w := traced(append(waiter, "echo", "go")...)
	wout, _ := w.StdoutPipe()
	werr, _ := w.StderrPipe()
	if err := w.Start(); err != nil {
		return err
	}
	if kind == "flock1" {
		time.Sleep(200 * time.Millisecond)
	} else if err := awaitLine(werr, "waiting"); err != nil {
		w.Process.Kill()
		w.Wait()
		return err
	}
	time.Sleep(time.Duration(300+rand.IntN(300)) * time.Millisecond)
	fmt.Fprintf(marker, "release %d holder=%d waiter=%d", r, h.Process.Pid, w.Process.Pid)
	hin.Close()
	awaitLine(wout, "go")
	err := w.Wait()
	fmt.Fprintf(marker, "done %d", r)
	return err
}

func awaitLine(rd io.Reader, prefix string) error {
	sc := bufio.NewScanner(rd)
	for sc.Scan() {
		if strings.Contains(sc.Text(), prefix) {
			go io.Copy(io.Discard, rd)
			return nil
		}
	}
	return fmt.Errorf("no line with %q", prefix)
}

type event struct {
	us        float64 // after the release
	tgid      int
	name      string
	args      []string
	ret       string
	isProcess bool
}

type roundTrace struct {
	holder, waiter int
	events         []event
	parent         map[int]int
}

var lineRE = regexp.MustCompile(`^\s*.+?-(\d+)\s+\(\s*(\d+|-+)\)\s+\[\d+\]\s+\S+\s+([\d.]+):\s+(\w+):\s*(.*)$`)

// parse reads the trace into rounds (between the driver's markers).
func parse(rd io.Reader) []*roundTrace {
	var rounds []*roundTrace
	var cur *roundTrace
	var t0 float64
	parent := map[int]int{}
	tgidOf := map[int]int{}
	pending := map[int]event{}
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := lineRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		tid, _ := strconv.Atoi(m[1])
		tgid, err := strconv.Atoi(m[2])
		if err != nil {
			tgid = tid
		}
		tgidOf[tid] = tgid
		ts, _ := strconv.ParseFloat(m[3], 64)
		ev, rest := m[4], m[5]
		switch ev {
		case "tracing_mark_write":
			if strings.HasPrefix(rest, "release") {
				cur = &roundTrace{parent: parent}
				fmt.Sscanf(rest, "release %d holder=%d waiter=%d", new(int), &cur.holder, &cur.waiter)
				t0 = ts
				rounds = append(rounds, cur)
			} else {
				cur = nil
			}
			continue
		case "sched_process_fork":
			var pp, cp int
			for _, f := range strings.Fields(rest) {
				if v, ok := strings.CutPrefix(f, "pid="); ok {
					pp, _ = strconv.Atoi(v)
				}
				if v, ok := strings.CutPrefix(f, "child_pid="); ok {
					cp, _ = strconv.Atoi(v)
				}
			}
			if p, ok := tgidOf[pp]; ok {
				pp = p
			}
			parent[cp] = pp
			continue
		}
		if ev == "sys_enter" { // a call may span the release marker
			f := strings.Fields(rest) // NR n (a, b, c, ...)
			nr, _ := strconv.Atoi(f[1])
			args := strings.Split(strings.Trim(strings.Join(f[2:], " "), "()"), ", ")
			pending[tid] = event{tgid: tgid, name: sysName[nr], args: args}
			continue
		}
		if cur == nil {
			continue
		}
		us := (ts - t0) * 1e6
		switch ev {
		case "sys_exit":
			e, ok := pending[tid]
			delete(pending, tid)
			if !ok || e.name == "" {
				continue
			}
			e.us = us
			e.ret = strings.TrimSpace(rest[strings.LastIndex(rest, "=")+1:])
			cur.events = append(cur.events, e)
		default:
			cur.events = append(cur.events, event{us: us, tgid: tgid, name: ev, args: []string{rest}, isProcess: true})
		}
	}
	return rounds
}

// role is the process tree a tgid belongs to in r: H, Hc, W, Wc or "".
func (r *roundTrace) role(tgid int) string {
	for t, seen := tgid, 0; t != 0 && seen < 64; t, seen = r.parent[t], seen+1 {
		// The traced sh execs the holder (or waiter) in place: its pid
		// is the process, its descendants the job.
		switch t {
		case r.holder:
			if t == tgid {
				return "H"
			}
			return "Hc"
		case r.waiter:
			if t == tgid {
				return "W"
			}
			return "Wc"
		}
	}
	return ""
}

func report(kind string, ms []step, rounds []*roundTrace) {
	at := make([][]float64, len(ms))
	for _, r := range rounds {
		from := -1e18
		for i, s := range ms {
			for _, e := range r.events {
				if e.us >= from && e.name == s.name && r.role(e.tgid) == s.role && s.match(e.args, e.ret) {
					at[i] = append(at[i], e.us)
					from = e.us
					break
				}
			}
		}
	}
	fmt.Printf("%s: %d hand-overs; µs after the holder's child was told to exit (median, p90; n = rounds with the step)\n\n", kind, len(rounds))
	fmt.Println("| step | median | p90 | n |")
	fmt.Println("| --- | --- | --- | --- |")
	for i, s := range ms {
		v := at[i]
		if len(v) == 0 {
			continue
		}
		sort.Float64s(v)
		fmt.Printf("| %s | %.0f | %.0f | %d |\n", s.label, v[len(v)/2], v[len(v)*9/10], len(v))
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "handsteps:", err)
	os.Exit(1)
}
