package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/leasewrap/leasewrap/lease/claim"
)

// fillClaims writes n live TTL claims (this process's pid, expiring in an
// hour) into root, in the byte format `claim acquire` writes; the first
// one is written by leasewrap itself and is the template of the others.
func fillClaims(e *env, root string, n int) error {
	acq := e.lw([]string{"claim", "acquire", "bench:s0", "--holder", "lwbench", "--root", root,
		"--pid", fmt.Sprint(os.Getpid()), "--ttl-ms", "3600000"})
	if out, err := acq.CombinedOutput(); err != nil {
		return fmt.Errorf("claim acquire: %v: %s", err, out)
	}
	dir := filepath.Join(root, ".fno", "claims")
	tmpl, err := os.ReadFile(filepath.Join(dir, claim.EncodeKey("bench:s0")+".lock"))
	if err != nil {
		return err
	}
	if !bytes.Contains(tmpl, []byte("key: bench:s0\n")) {
		return fmt.Errorf("unexpected claim format:\n%s", tmpl)
	}
	for i := 1; i < n; i++ {
		key := fmt.Sprintf("bench:s%d", i)
		b := bytes.Replace(tmpl, []byte("key: bench:s0\n"), []byte("key: "+key+"\n"), 1)
		if err := os.WriteFile(filepath.Join(dir, claim.EncodeKey(key)+".lock"), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// fillOwners writes n owner records of one session (schema 3, this
// process's pid, unlocked) in the byte layout leasewrap writes.
func fillOwners(root, id string, n int) error {
	dir := filepath.Join(root, "leases", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(root, "locks"), 0o755); err != nil {
		return err
	}
	pid := os.Getpid()
	base := time.Now().UnixMilli()
	for i := 0; i < n; i++ {
		ms := base + int64(i)
		token := fmt.Sprintf("%d-%d-%s", pid, ms, id)
		rec := fmt.Sprintf(`{
  "schema_version": 3,
  "session_id": %q,
  "lease_token": %q,
  "pid": %d,
  "storage_writer_epoch": 6,
  "daemon_namespace": null,
  "build_fingerprint": null,
  "protocol_version": null,
  "endpoint": null,
  "executable_path": "/usr/bin/sleep",
  "daemon_instance_id": "process-%d",
  "acquired_at_ms": %d,
  "last_seen_ms": %d
}`, id, token, pid, pid, ms, ms)
		if err := os.WriteFile(filepath.Join(dir, token+".json"), []byte(rec), 0o644); err != nil {
			return err
		}
	}
	return nil
}

type scaleRow struct {
	what        string
	n           int
	wall, cpu   sample
	rss         int64
	lines, fail int
}

// timeList runs argv three times and records wall, CPU and peak RSS, and
// the number of output lines of the last run.
func timeList(e *env, what string, n int, argv []string) scaleRow {
	r := scaleRow{what: what, n: n}
	for i := 0; i < 3; i++ {
		var out bytes.Buffer
		c := e.lw(argv)
		c.Stdout = &out
		start := time.Now()
		err := c.Run()
		d := time.Since(start)
		if err != nil {
			r.fail++
			fmt.Fprintln(os.Stderr, "lwbench:", what, n, err)
			continue
		}
		ru := c.ProcessState.SysUsage().(*syscall.Rusage)
		r.wall = append(r.wall, d)
		r.cpu = append(r.cpu, time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
		r.rss = max(r.rss, ru.Maxrss)
		r.lines = strings.Count(out.String(), "\n")
	}
	return r
}

func scale(e *env) {
	sizes := []int{1000, 10000, 100000}
	if e.quick {
		sizes = sizes[:2]
	}
	var rows []scaleRow
	for _, n := range sizes {
		root := filepath.Join(e.dir, fmt.Sprintf("scale-claims-%d", n))
		if err := fillClaims(e, root, n); err != nil {
			fatal(err)
		}
		rows = append(rows, timeList(e, "claim list", n, []string{"claim", "list", "--root", root}))
		os.RemoveAll(root)

		sroot := filepath.Join(e.dir, fmt.Sprintf("scale-sessions-%d", n))
		id := sid(900000 + n)
		if err := fillOwners(sroot, id, n); err != nil {
			fatal(err)
		}
		rows = append(rows, timeList(e, "session owners", n, []string{"session", "owners", id, "--root", sroot}))
		os.RemoveAll(sroot)
	}
	var out [][]string
	first := map[string]scaleRow{}
	for _, r := range rows {
		if _, ok := first[r.what]; !ok {
			first[r.what] = r
		}
		f := first[r.what]
		perEntry := float64(r.wall.median()) / float64(r.n)
		growth := perEntry / (float64(f.wall.median()) / float64(f.n))
		out = append(out, []string{r.what, fmt.Sprint(r.n), ms(r.wall.median()), ms(r.cpu.median()),
			fmt.Sprintf("%.1f", perEntry/1000), fmt.Sprintf("%.2f", growth),
			fmt.Sprintf("%.1f", float64(r.rss)/1024), fmt.Sprint(r.lines), fmt.Sprint(r.fail)})
	}
	table("Scale: listing 1k / 10k / 100k entries",
		"Median of 3 runs, warm page cache. Claims are live TTL claims (every one is shown); owner records are unlocked (liveness is probed for each). Per-entry growth is (time/entry) ÷ (time/entry at 1k): ≤ 1 means linear or better. Lines = output lines (header + one per entry).",
		[]string{"command", "entries", "wall ms", "CPU ms", "µs per entry", "per-entry growth vs 1k", "peak RSS MiB", "lines", "failed"}, out)
}
