package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/leasewrap/leasewrap/lease/claim"
)

// renewals runs m wrappers holding TTL claims renewed every second and
// measures the CPU all of them spend per renewal, and how late renewals
// are when the machine is shared by all of them.
func renewals(e *env, m int) {
	if e.quick {
		m = min(m, 100)
	}
	window := 20 * time.Second
	if e.quick {
		window = 10 * time.Second
	}
	root := filepath.Join(e.dir, "renewals")
	cmds := make([]*exec.Cmd, m)
	paths := make([]string, m)
	start := time.Now()
	for i := range cmds {
		key := fmt.Sprintf("bench:r%d", i)
		cmds[i] = e.lw([]string{"claim", "run", key, "--root", root, "--ttl", "1m", "--renew-every", "1s", "--", "sleep", "100000"})
		paths[i] = filepath.Join(root, ".fno", "claims", claim.EncodeKey(key)+".lock")
		if err := cmds[i].Start(); err != nil {
			fatal(fmt.Errorf("start wrapper %d: %w", i, err))
		}
	}
	exited := make(chan int, m)
	for i, c := range cmds {
		go func() { c.Wait(); exited <- i }()
	}
	defer func() {
		for _, c := range cmds {
			c.Process.Signal(syscall.SIGTERM)
		}
		for range cmds {
			<-exited
		}
	}()
	for i := 0; i < m; {
		if claimExpires(paths[i]) != 0 {
			i++
			continue
		}
		if time.Since(start) > 5*time.Minute {
			fatal(fmt.Errorf("renewals: wrapper %d never acquired", i))
		}
		time.Sleep(10 * time.Millisecond)
	}
	startup := time.Since(start)
	time.Sleep(2 * time.Second)
	cpu0, e0 := make([]time.Duration, m), make([]int64, m)
	for i, c := range cmds {
		cpu0[i], e0[i] = cpuTime(c.Process.Pid), claimExpires(paths[i])
	}
	time.Sleep(window)
	var cpu time.Duration
	var renewed, rss int64
	ages := make([]time.Duration, 0, m)
	now := time.Now().UnixMilli()
	for i, c := range cmds {
		cpu += cpuTime(c.Process.Pid) - cpu0[i]
		e1 := claimExpires(paths[i])
		renewed += (e1 - e0[i] + 500) / 1000
		ages = append(ages, time.Duration(now-(e1-60000))*time.Millisecond)
		rss += statusKB(c.Process.Pid, "VmRSS")
	}
	dead := len(exited)
	sort.Slice(ages, func(i, j int) bool { return ages[i] < ages[j] })
	age := sample(ages)
	ideal := int64(m) * int64(window/time.Second)
	table(fmt.Sprintf("Renewal cost: %d wrappers, each renewing a TTL claim every second", m),
		fmt.Sprintf("Window %v after all had acquired (+2 s). Renewals counted from each claim's expires_at advance; ideal = wrappers × seconds. Age of last renewal at the end of the window should stay ≤ 1 s.", window),
		[]string{"wrappers", "start-up of all (s)", "renewals (ideal)", "wrapper CPU in window (s)", "CPU ms per renewal", "cores used", "age of last renewal p50 / p99 / max (ms)", "wrappers exited early", "total wrapper RSS MiB"},
		[][]string{{fmt.Sprint(m), fmt.Sprintf("%.1f", startup.Seconds()), fmt.Sprintf("%d (%d)", renewed, ideal),
			fmt.Sprintf("%.2f", cpu.Seconds()), ms(cpu / time.Duration(max(renewed, 1))),
			fmt.Sprintf("%.2f", cpu.Seconds()/window.Seconds()),
			fmt.Sprintf("%s / %s / %s", ms(age.median()), ms(age.quantile(0.99)), ms(age.quantile(1))),
			fmt.Sprint(dead), fmt.Sprintf("%.0f", float64(rss)/1024)}})
	os.Stdout.Sync()
}
