package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/leasewrap/leasewrap/lease/claim"
)

type footprintResult struct {
	name              string
	period, dur       time.Duration
	renewals          int64
	cpu               time.Duration
	hwm, rss, threads int64
	startCPU          time.Duration
}

// holdIdle runs `claim run --ttl 1m [--renew-every period] -- sleep` for d
// and reads the wrapper's CPU time, renewals and peak RSS.
func holdIdle(e *env, name string, period, d time.Duration) (footprintResult, error) {
	key := e.next()
	extra := []string{"--ttl", "1m"}
	if period > 0 {
		extra = append(extra, "--renew-every", period.String())
	}
	c := e.lw(claimKind.argv(e, key, extra, "sleep", "100000"))
	if err := c.Start(); err != nil {
		return footprintResult{}, err
	}
	pid := c.Process.Pid
	defer func() {
		c.Process.Signal(syscall.SIGTERM)
		c.Wait()
	}()
	path := filepath.Join(e.claimRoot(), ".fno", "claims", claim.EncodeKey(fmt.Sprintf("bench:k%d", key))+".lock")
	deadline := time.Now().Add(10 * time.Second)
	for claimExpires(path) == 0 {
		if time.Now().After(deadline) {
			return footprintResult{}, fmt.Errorf("%s: claim %s not written", name, path)
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // start-up done
	r := footprintResult{name: name, period: period, dur: d, startCPU: cpuTime(pid)}
	e0 := claimExpires(path)
	time.Sleep(d)
	e1 := claimExpires(path)
	r.cpu = cpuTime(pid) - r.startCPU
	r.hwm, r.rss, r.threads = statusKB(pid, "VmHWM"), statusKB(pid, "VmRSS"), int64(len(mustGlob(fmt.Sprintf("/proc/%d/task/*", pid))))
	p := period
	if p == 0 {
		p = 20 * time.Second
	}
	// Every renewal moves expires_at to now+TTL, so the advance over the
	// window counts the renewals that happened in it.
	r.renewals = (e1 - e0 + p.Milliseconds()/2) / p.Milliseconds()
	if r.renewals == 0 && e1 != e0 {
		r.renewals = 1
	}
	return r, nil
}

func mustGlob(p string) []string {
	m, _ := filepath.Glob(p)
	return m
}

func footprint(e *env, honest time.Duration) {
	d := 30 * time.Second
	if e.quick {
		d = 10 * time.Second
	}
	var rs []footprintResult
	if r, err := holdIdle(e, "--ttl 1m --renew-every 1s", time.Second, d); err == nil {
		rs = append(rs, r)
	} else {
		fmt.Fprintln(os.Stderr, "lwbench:", err)
	}
	if honest > 0 {
		if r, err := holdIdle(e, "--ttl 1m (renewal every 20 s, default)", 0, honest); err == nil {
			rs = append(rs, r)
		} else {
			fmt.Fprintln(os.Stderr, "lwbench:", err)
		}
	}
	var rows [][]string
	for _, r := range rs {
		per := "—"
		if r.renewals > 0 {
			per = ms(r.cpu / time.Duration(r.renewals))
		}
		rows = append(rows, []string{r.name, r.dur.String(), fmt.Sprint(r.renewals), ms(r.startCPU), ms(r.cpu), per,
			fmt.Sprintf("%.2f", float64(r.cpu)/float64(r.dur)*100),
			fmt.Sprintf("%.1f", float64(r.hwm)/1024), fmt.Sprintf("%.1f", float64(r.rss)/1024), fmt.Sprint(r.threads)})
	}
	table("Footprint of an idle wrapper holding a TTL claim (`claim run --ttl 1m … -- sleep`)",
		"CPU is the wrapper's own (its `sleep` child excluded), summed over its threads from /proc/PID/task/*/schedstat (ns resolution); renewals are counted from the advance of the claim's expires_at over the window. Start-up CPU is everything before the window (exec, acquisition, ptrace anchoring).",
		[]string{"run", "window", "renewals", "start-up CPU ms", "window CPU ms", "CPU ms per renewal", "CPU % of one core", "peak RSS (VmHWM) MiB", "RSS MiB", "threads"}, rows)
}
