// Command lwbench measures leasewrap as a user sees it: whole processes,
// wall-clock times, side by side with flock(1) and a bare exec, each
// variant interleaved with the others in the same run so that the noise of
// a shared machine hits all of them alike. It prints Markdown tables.
//
// Usage (see bench/run.sh, which builds leasewrap and this driver):
//
//	lwbench -bin bin/leasewrap -empty EMPTY -kong2 KONG2 -gorun GORUN [-claimrs C -reservers R -seedrs S -floors DIR] [-n 200] [-sections startup,seeds,overhead,jobcost,...]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// env is one benchmark run: the binaries and a private scratch directory.
type env struct {
	bin     string // leasewrap under test
	compare string // another leasewrap (an older build), measured alongside in the start-up section; "" for none
	empty   string // static empty Go program (start-up baseline)
	kong2   string // static program parsing a two-verb kong model
	gorun   string // static program that runs its arguments and waits
	flock   string // flock(1)
	dir     string // scratch root
	environ []string
	n       int // repetitions of the fast measurements
	quick   bool
	seq     int // unique key counter
}

// kind builds the argv of one run verb.
type kind struct {
	name string
	argv func(e *env, key int, extra []string, cmd ...string) []string
}

func (e *env) claimRoot() string { return filepath.Join(e.dir, "claims") }
func (e *env) home() string      { return filepath.Join(e.dir, "orchestratectl") }
func (e *env) sessRoot() string  { return filepath.Join(e.dir, "sessions") }

// sid is a deterministic session id for key.
func sid(key int) string { return fmt.Sprintf("5f0c6d4e-3b1a-4f59-9b8e-%012x", key) }

func (e *env) next() int { e.seq++; return e.seq }

func withCmd(argv, extra, cmd []string) []string {
	argv = append(argv, runFlags...)
	argv = append(argv, extra...)
	argv = append(argv, "--")
	return append(argv, cmd...)
}

// runFlags are added to every run verb (-runflags, e.g. "--job pgroup").
var runFlags []string

var (
	claimKind = kind{"claim", func(e *env, key int, extra []string, cmd ...string) []string {
		return withCmd([]string{"claim", "run", fmt.Sprintf("bench:k%d", key), "--root", e.claimRoot()}, extra, cmd)
	}}
	reserveKind = kind{"reserve", func(e *env, key int, extra []string, cmd ...string) []string {
		return withCmd([]string{"reserve", "run", fmt.Sprintf("bench-k%d", key), "--home", e.home()}, extra, cmd)
	}}
	sessionKind = kind{"session", func(e *env, key int, extra []string, cmd ...string) []string {
		return withCmd([]string{"session", "run", sid(key), "--root", e.sessRoot(), "--epoch", "6"}, extra, cmd)
	}}
	flockKind = kind{"flock", func(e *env, key int, extra []string, cmd ...string) []string {
		return withCmd([]string{"flock", "run", filepath.Join(e.dir, fmt.Sprintf("flock-k%d.lock", key))}, extra, cmd)
	}}
	kinds = []kind{flockKind, claimKind, reserveKind, sessionKind}
)

// lw returns an unstarted leasewrap command.
func (e *env) lw(argv []string) *exec.Cmd { return e.lwBin(e.bin, argv) }

// lwBin returns an unstarted command of the leasewrap binary bin.
func (e *env) lwBin(bin string, argv []string) *exec.Cmd {
	c := exec.Command(bin, argv...)
	c.Env = e.environ
	return c
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == reapFlag {
		reapMain(os.Args[2:])
	}
	bin := flag.String("bin", "bin/leasewrap", "leasewrap binary under test")
	n := flag.Int("n", 200, "repetitions of the wrapper-overhead measurement (others scale from it)")
	empty := flag.String("empty", "", "static empty Go program, the start-up baseline (bench/startup/empty)")
	kong2 := flag.String("kong2", "", "static program that parses a two-verb kong model (bench/startup/kong2)")
	gorun := flag.String("gorun", "", "static program that runs its arguments as a child (bench/startup/gorun)")
	compare := flag.String("compare", "", "another leasewrap binary (e.g. a build of the previous commit) whose run verbs the start-up section measures in the same rounds")
	var sb seedBins
	var fb floorBins
	flag.StringVar(&fb.dir, "floors", "", "directory of the floor programs floorflock, floorclaim, floorsession, floorreserve (bench/startup/floor*) for the seeds section")
	flag.StringVar(&sb.claimrs, "claimrs", "", "the claims seed's driver (lease/claim/testdata/claimcheck, release build) for the seeds section")
	flag.StringVar(&sb.reservers, "reservers", "", "the reservation seed's driver (lease/reserve/testdata/reservecheck, release build)")
	flag.StringVar(&sb.seedrs, "seedrs", "", "the session seed's driver (lease/session/testdata/seedcheck, release build)")
	flag.Func("runflags", "flags added to every measured run verb, space-separated (e.g. \"--job pgroup\")", func(v string) error {
		runFlags = strings.Fields(v)
		return nil
	})
	sections := flag.String("sections", "startup,seeds,overhead,jobcost,handover,idioms,takeover,contention,footprint,scale,renewals", "comma-separated sections to run")
	quick := flag.Bool("quick", false, "shorter runs (footprint 10 s, fewer scale sizes, 100 renewing wrappers, 40 seeds rounds)")
	honest := flag.Duration("honest", 60*time.Second, "length of the footprint run with the default renewal period (0 skips it)")
	renewers := flag.Int("renewers", 1000, "concurrent renewing wrappers in the renewals section")
	flag.Parse()

	abs, err := filepath.Abs(*bin)
	if err != nil {
		fatal(err)
	}
	fl, err := exec.LookPath("flock")
	if err != nil {
		fatal(fmt.Errorf("flock(1) is needed (util-linux): %w", err))
	}
	dir, err := os.MkdirTemp("", "lwbench-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(dir)
	e := &env{bin: abs, empty: *empty, kong2: *kong2, gorun: *gorun, flock: fl, dir: dir, n: *n, quick: *quick}
	if *compare != "" {
		if e.compare, err = filepath.Abs(*compare); err != nil {
			fatal(err)
		}
	}
	e.environ = append(os.Environ(), "FNO_EVENTS_PATH="+filepath.Join(dir, "events.jsonl"), "LEASEWRAP_LOG_FORMAT=text")
	for _, d := range []string{e.claimRoot(), e.home(), e.sessRoot()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			fatal(err)
		}
	}
	machine()
	for _, s := range strings.Split(*sections, ",") {
		start := time.Now()
		switch strings.TrimSpace(s) {
		case "startup":
			startup(e)
		case "seeds":
			seeds(e, sb, fb)
		case "overhead":
			overhead(e)
		case "jobcost":
			jobCost(e)
		case "handover":
			handover(e)
		case "idioms":
			handoverIdioms(e)
		case "takeover":
			takeover(e)
		case "contention":
			contention(e)
		case "footprint":
			footprint(e, *honest)
		case "scale":
			scale(e)
		case "renewals":
			renewals(e, *renewers)
		case "":
		default:
			fatal(fmt.Errorf("unknown section %q", s))
		}
		fmt.Fprintf(os.Stderr, "lwbench: %s took %v\n", s, time.Since(start).Round(time.Millisecond))
	}
}

// machine prints what the numbers were measured on.
func machine() {
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				cpu = strings.TrimSpace(l[strings.Index(l, ":")+1:])
				break
			}
		}
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	fmt.Printf("## Machine\n\n%d CPUs (%s), kernel %s, %s, %s\n\n", runtime.NumCPU(), cpu,
		strings.TrimSpace(string(kernel)), runtime.Version(), time.Now().UTC().Format(time.RFC3339))
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "lwbench:", err)
	os.Exit(1)
}

// table prints a Markdown table.
func table(title, note string, header []string, rows [][]string) {
	fmt.Printf("## %s\n\n", title)
	if note != "" {
		fmt.Printf("%s\n\n", note)
	}
	fmt.Printf("| %s |\n|", strings.Join(header, " | "))
	for range header {
		fmt.Print(" --- |")
	}
	fmt.Println()
	for _, r := range rows {
		fmt.Printf("| %s |\n", strings.Join(r, " | "))
	}
	fmt.Println()
}
