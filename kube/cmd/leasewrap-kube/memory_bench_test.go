//go:build kubebench

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/procstat"
	"github.com/leasewrap/leasewrap/kube/internal/kubetest"
)

// TestKubeMemory measures the memory every process leasewrap adds to a
// pod while it holds a Lease: leasewrap-kube and its job guard (the small
// leasewrap installed beside it, as make install lays them out), without
// the job, sampled every 50 ms over a window of renewals (--renew-every
// 1s), against client-go's LeaderElector holding its own Lease. It prints
// the median (idle) and the maximum (during a renewal) of the summed
// VmRSS, and the holder's anonymous and file-backed parts. Built only with
// -tags kubebench (make bench-kube); it asserts nothing about the numbers.
func TestKubeMemory(t *testing.T) {
	s := kubetest.Start(t)
	b := build(t)
	dir := t.TempDir()
	lw := filepath.Join(dir, "leasewrap-kube")
	copyFile(t, b.lw, lw)
	root, err := kubetest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(dir, "leasewrap"), "./cmd/leasewrap")
	cmd.Dir = filepath.Dir(root)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build leasewrap beside leasewrap-kube: %v\n%s", err, out)
	}
	const window = 12 * time.Second
	stop := filepath.Join(dir, "stop")
	for _, who := range []string{"leasewrap", "client-go"} {
		var p *kproc
		if who == "leasewrap" {
			bb := b
			bb.lw = lw
			p = wrap(t, bb, s, kubetest.Runner, "mem-lw", []string{"--renew-every", "1s"}, nil, untilStop(stop)...)
			leaseHolder(t, s, "mem-lw", time.Minute, func(h string) bool { return h != "" })
		} else {
			p = elect(t, b, s, "mem-el", "mem-el", "--lease-duration", "15s", "--renew-deadline", "10s", "--retry-period", "1s")
			p.event(t, "started-leading", time.Minute)
		}
		time.Sleep(2 * time.Second) // past the start-up
		var sum, anon, file []int
		for end := time.Now().Add(window); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			total := 0
			for _, q := range tree(p.Cmd.Process.Pid) {
				if !isJob(q) {
					total += status(q, "VmRSS:")
				}
			}
			sum = append(sum, total)
			anon = append(anon, status(p.Cmd.Process.Pid, "RssAnon:"))
			file = append(file, status(p.Cmd.Process.Pid, "RssFile:"))
		}
		procs := 0
		for _, q := range tree(p.Cmd.Process.Pid) {
			if !isJob(q) {
				procs++
			}
		}
		fmt.Printf("bench %-34s %-10s idle %d kB, peak %d kB (%d processes, %d samples over %v, renewals every 1s); holder anon %d/%d kB, file %d/%d kB (idle/peak)\n",
			"memory_rss", who, median(sum), maxOf(sum), procs, len(sum), window, median(anon), maxOf(anon), median(file), maxOf(file))
		if who == "leasewrap" {
			os.WriteFile(stop, nil, 0o644)
		} else {
			p.Cmd.Process.Signal(os.Interrupt)
		}
		p.wait(t, time.Minute)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// tree is pid and its descendants.
func tree(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := procstat.Read(p); err == nil {
			parent[p] = st.PPID
		}
	}
	var out []int
	for p := range parent {
		q := p
		for q != pid && q > 1 {
			q = parent[q]
		}
		if q == pid {
			out = append(out, p)
		}
	}
	return out
}

// isJob tells the test's job (sh and its sleeps) from leasewrap's processes.
func isJob(pid int) bool {
	argv, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	a := strings.Split(string(argv), "\x00")
	base := filepath.Base(a[0])
	return base == "sh" || base == "sleep"
}

// status is a "Name:" field of /proc/pid/status in kB.
func status(pid int, name string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == name {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

func median(v []int) int {
	if len(v) == 0 {
		return 0
	}
	c := append([]int(nil), v...)
	sort.Ints(c)
	return c[len(c)/2]
}

func maxOf(v []int) int {
	m := 0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
