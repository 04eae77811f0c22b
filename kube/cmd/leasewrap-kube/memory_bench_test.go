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
// 1s), against client-go's LeaderElector holding its own Lease and two
// floors (kube/internal/memfloor): the least an idle holder keeps resident
// doing the same requests (a watch, a PUT every second) on net/http,
// crypto/tls and encoding/json alone ("floor-bare"), and the same over
// the HTTP client client-go builds from a kubeconfig ("floor-transport").
// It prints the median (idle) and the maximum (during a renewal) of the
// summed VmRSS, and the holder's anonymous and file-backed parts.
//
// leasewrap-kube is laid out by install(1), as make install does (its
// pages come into the page cache in small folios, as they do when a pod
// starts it from disk: a fault maps 64 KiB around it), and, in the row
// "leasewrap-onewrite", written in one write: the kernel may then cache
// it in large folios (up to 2 MiB) and a fault maps a whole folio, so
// what internal/memtrim dropped comes back whole. Built only with -tags
// kubebench (make bench-kube); it asserts nothing about the numbers.
// KUBE_MEM_ONLY=a,b runs only those rows.
func TestKubeMemory(t *testing.T) {
	s := kubetest.Start(t)
	b := build(t)
	dir := t.TempDir()
	lw := filepath.Join(dir, "leasewrap-kube")
	if out, err := exec.Command("install", "-m", "0755", b.lw, lw).CombinedOutput(); err != nil {
		t.Fatalf("install leasewrap-kube: %v\n%s", err, out)
	}
	dir1 := t.TempDir()
	lw1 := filepath.Join(dir1, "leasewrap-kube")
	copyFile(t, b.lw, lw1)
	root, err := kubetest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, dir1} {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(d, "leasewrap"), "./cmd/leasewrap")
		cmd.Dir = filepath.Dir(root)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build leasewrap beside leasewrap-kube: %v\n%s", err, out)
		}
	}
	bare := kubetest.Build(t, "./internal/memfloor/bare")
	transport := kubetest.Build(t, "./internal/memfloor/transport")
	const window = 12 * time.Second
	stop := filepath.Join(dir, "stop")
	rows := []string{"leasewrap", "leasewrap-onewrite", "client-go", "floor-bare", "floor-transport"}
	if v := os.Getenv("KUBE_MEM_ONLY"); v != "" {
		rows = strings.Split(v, ",")
	}
	for _, who := range rows {
		var p *kproc
		switch who {
		case "leasewrap", "leasewrap-onewrite":
			bb := b
			bb.lw = lw
			if who == "leasewrap-onewrite" {
				bb.lw = lw1
			}
			os.Remove(stop)
			p = wrap(t, bb, s, kubetest.Runner, "mem-"+who, []string{"--renew-every", "1s"}, nil, untilStop(stop)...)
		case "client-go":
			p = elect(t, b, s, "mem-el", "mem-el", "--lease-duration", "15s", "--renew-deadline", "10s", "--retry-period", "1s")
			p.event(t, "started-leading", time.Minute)
		case "floor-bare":
			p = startProc(t, bare, nil, s.URL, s.CA, s.Token(kubetest.Runner), kubetest.Namespace, "mem-bare", "mem-bare")
		case "floor-transport":
			p = startProc(t, transport, nil, s.Kubeconfig(kubetest.Runner), "mem-transport", "mem-transport")
		default:
			t.Fatalf("KUBE_MEM_ONLY: no row %q", who)
		}
		if who != "client-go" {
			leaseHolder(t, s, "mem-"+strings.TrimPrefix(who, "floor-"), time.Minute, func(h string) bool { return h != "" })
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
		fmt.Printf("bench %-34s %-18s idle %d kB, peak %d kB (%d processes, %d samples over %v, renewals every 1s); holder anon %d/%d kB, file %d/%d kB (idle/peak)\n",
			"memory_rss", who, median(sum), maxOf(sum), procs, len(sum), window, median(anon), maxOf(anon), median(file), maxOf(file))
		if strings.HasPrefix(who, "leasewrap") {
			os.WriteFile(stop, nil, 0o644)
		} else {
			p.Cmd.Process.Signal(os.Interrupt)
		}
		p.wait(t, time.Minute)
	}
}

// copyFile copies from to to in one write.
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
