// Command healthload measures the --listen endpoint's health contract
// (docs/METRICS.md, "Under load"): it starts a leasewrap holding a flock
// with --listen on loopback, then probes /healthz and /readyz as a
// kubelet does — with nothing else connected, with N slow and N idle
// connections open (a request head a byte every 0.3 s; nothing), and
// under a flood of connections opened and reset — and prints each phase's
// probe latency (p50, p99, max), failed probes, and leasewrap's resident
// memory. Bounded: each phase lasts -phase, the flood at most -flood-max
// connections; everything stops by itself.
//
//	go -C bench run ./healthload -leasewrap /path/to/leasewrap
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil/httpload"
)

func main() {
	lw := flag.String("leasewrap", "leasewrap", "the leasewrap executable")
	n := flag.Int("conns", 500, "slow connections, and as many idle ones")
	phase := flag.Duration("phase", 5*time.Second, "how long each phase probes")
	every := flag.Duration("every", 100*time.Millisecond, "time between probes")
	floodMax := flag.Int("flood-max", 50000, "most connections the flood opens")
	flag.Parse()
	if err := run(*lw, *n, *phase, *every, *floodMax); err != nil {
		fmt.Fprintln(os.Stderr, "healthload:", err)
		os.Exit(1)
	}
}

func run(lw string, n int, phase, every time.Duration, floodMax int) error {
	dir, err := os.MkdirTemp("", "healthload")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(lw, "flock", "run", filepath.Join(dir, "l.lock"), "--listen", "127.0.0.1:0", "--", "sleep", "3600")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	addr, err := listenAddr(stderr)
	if err != nil {
		return err
	}
	pid := cmd.Process.Pid
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if code, _, _, _ := httpload.Probe(addr, "/readyz", time.Second); code == 200 {
			break // the lease is held: 200 is the true answer of both
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the lease was not held within 10 s")
		}
	}
	fmt.Printf("leasewrap pid %d on %s; %d slow + %d idle connections; phases of %v, a probe pair every %v\n\n", pid, addr, n, n, phase, every)
	fmt.Printf("%-34s %7s %8s %8s %8s %7s %10s %10s\n", "phase", "probes", "p50 ms", "p99 ms", "max ms", "failed", "VmRSS KiB", "VmHWM KiB")
	report := func(name string, lat []time.Duration, failed int, extra string) {
		slices.Sort(lat)
		q := func(p float64) float64 {
			if len(lat) == 0 {
				return 0
			}
			return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
		}
		fmt.Printf("%-34s %7d %8.2f %8.2f %8.2f %7d %10d %10d %s\n", name, len(lat)+failed, q(0.5), q(0.99), q(1), failed, status(pid, "VmRSS"), status(pid, "VmHWM"), extra)
	}
	ctx := context.Background()

	lat, failed := probe(addr, phase, every)
	report("nothing else connected", lat, failed, "")

	slow := httpload.Slow(ctx, addr, n, 300*time.Millisecond)
	idle := httpload.Slow(ctx, addr, n, 0)
	for deadline := time.Now().Add(10 * time.Second); slow.Open()+idle.Open() < int64(2*n) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	open := slow.Open() + idle.Open()
	lat, failed = probe(addr, phase, every)
	report(fmt.Sprintf("%d slow + idle connections", 2*n), lat, failed, fmt.Sprintf("(%d open, %d opened)", open, slow.Opened()+idle.Opened()))
	slow.Stop()
	idle.Stop()

	fctx, cancel := context.WithTimeout(ctx, phase)
	defer cancel()
	flooded := make(chan int64, 1)
	go func() { flooded <- httpload.Flood(fctx, addr, 64, floodMax) }()
	lat, failed = probe(addr, phase, every)
	report("a flood (64 workers, open+reset)", lat, failed, fmt.Sprintf("(%d connections)", <-flooded))

	time.Sleep(time.Second)
	lat, failed = probe(addr, phase, every)
	report("after", lat, failed, "")
	return nil
}

// probe probes /healthz and /readyz every every for d: the latencies of
// the answers that were true (200) and the count of the others.
func probe(addr string, d, every time.Duration) ([]time.Duration, int) {
	var lat []time.Duration
	failed := 0
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(every) {
		for _, path := range []string{"/healthz", "/readyz"} {
			code, _, took, err := httpload.Probe(addr, path, time.Second)
			if err != nil || code != 200 {
				failed++
				continue
			}
			lat = append(lat, took)
		}
	}
	return lat, failed
}

func listenAddr(stderr interface{ Read([]byte) (int, error) }) (string, error) {
	re := regexp.MustCompile(`addr=(127\.0\.0\.1:\d+)`)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go func() { // keep draining leasewrap's log so it never blocks
				for sc.Scan() {
				}
			}()
			return m[1], nil
		}
	}
	return "", fmt.Errorf("leasewrap exited without serving: %v", sc.Err())
}

// status is a /proc/PID/status field in KiB.
func status(pid int, field string) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			var kib int
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kib)
			return kib
		}
	}
	return 0
}
