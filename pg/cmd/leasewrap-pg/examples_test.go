package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
)

// The examples in examples/pg, run as cron and systemd run them, with
// leasewrap and leasewrap-pg built side by side (leasewrap pg executes its
// sibling from beside itself), against a throwaway server whose password
// comes from a PGPASSFILE, as the examples advise.

const examplesDir = "../../../examples/pg"

var (
	exBuild sync.Once
	exBin   string
	exErr   error
)

// exampleBin builds leasewrap and leasewrap-pg into one directory, once.
func exampleBin(t *testing.T) string {
	t.Helper()
	exBuild.Do(func() {
		if exBin, exErr = os.MkdirTemp("", "leasewrap-pg-examples-"); exErr != nil {
			return
		}
		for pkg, name := range map[string]string{"../../../cmd/leasewrap": "leasewrap", ".": "leasewrap-pg"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(exBin, name), pkg)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				exErr = fmt.Errorf("build %s: %v\n%s", pkg, err, out)
				return
			}
		}
	})
	if exErr != nil {
		t.Fatal(exErr)
	}
	return exBin
}

// exampleEnv is a server, a DSN without password for it, and a PGPASSFILE
// with the password; jobs are fake scripts counting their runs.
type exampleEnv struct {
	srv      *pgtest.Server
	dsn      string
	passfile string
	dir      string
	r        *strings.Replacer
}

func newExampleEnv(t *testing.T) *exampleEnv {
	srv := pgtest.Start(t)
	e := &exampleEnv{srv: srv, dir: t.TempDir()}
	e.dsn = "postgres://postgres@" + srv.Addr() + "/postgres?sslmode=disable"
	e.passfile = filepath.Join(e.dir, "pgpass")
	host, port, _ := strings.Cut(srv.Addr(), ":")
	os.WriteFile(e.passfile, []byte(fmt.Sprintf("%s:%s:*:postgres:%s\n", host, port, pgtest.Password)), 0o600)
	var pairs []string
	for _, job := range []string{"sync-data", "nightly-report"} {
		script := filepath.Join(e.dir, job)
		os.WriteFile(script, []byte("#!/bin/sh\necho \"$LEASEWRAP_FENCE\" >> "+script+".runs\n"), 0o755)
		pairs = append(pairs, "/usr/local/bin/"+job, script)
	}
	e.r = strings.NewReplacer(pairs...)
	return e
}

// runs is how often the fake job ran.
func (e *exampleEnv) runs(job string) int {
	b, _ := os.ReadFile(filepath.Join(e.dir, job+".runs"))
	return strings.Count(string(b), "\n")
}

// cronLines reads the crontab: its variables and its commands.
func cronLines(t *testing.T) (vars map[string]string, cmds []string) {
	f, err := os.Open(filepath.Join(examplesDir, "crontab"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vars = map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.Contains(strings.Fields(l)[0], "="):
			k, v, _ := strings.Cut(l, "=")
			vars[k] = v
		default:
			f := strings.Fields(l)
			cmds = append(cmds, strings.Join(f[5:], " "))
		}
	}
	return vars, cmds
}

func TestExampleCrontab(t *testing.T) {
	e := newExampleEnv(t)
	vars, cmds := cronLines(t)
	if len(cmds) != 2 || !strings.Contains(vars["DATABASE_URL"], "target_session_attrs=read-write") {
		t.Fatalf("want two lines and a multi-host DATABASE_URL, have %q %v", cmds, vars)
	}
	run := func(line string) (int, string) {
		line = strings.ReplaceAll(e.r.Replace(line), `\%`, "%") // cron's escape
		cmd := exec.Command("sh", "-c", line)
		cmd.Env = []string{"PATH=" + exampleBin(t) + ":/usr/bin:/bin", "HOME=" + e.dir, "SHELL=/bin/sh",
			"DATABASE_URL=" + e.dsn, "PGPASSFILE=" + e.passfile}
		cmd.Stdin = nil
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	// sync-data: runs; skipped silently (75) while another host holds it.
	if code, out := run(cmds[0]); code != 0 || out != "" || e.runs("sync-data") != 1 {
		t.Fatalf("%s: want 0, silent, one run; have %d, %d runs:\n%s", cmds[0], code, e.runs("sync-data"), out)
	}
	pid := tmp(t, "pid")
	w := startLW(t, []string{"DATABASE_URL=" + e.srv.DSN()}, append([]string{"pg", "run", "sync-data", "--"}, pidJob(pid, 60)...)...)
	readPID(t, pid)
	if code, out := run(cmds[0]); code != 75 || out != "" || e.runs("sync-data") != 1 {
		t.Fatalf("%s while held: want 75, silent, no run; have %d, %d runs:\n%s", cmds[0], code, e.runs("sync-data"), out)
	}
	w.Cmd.Process.Signal(syscall.SIGTERM)
	w.wait(t, 30*time.Second)
	// The report: once per date; the second fire replays.
	for i := range 2 {
		if code, out := run(cmds[1]); code != 0 || out != "" {
			t.Fatalf("%s (fire %d): want 0, silent; have %d:\n%s", cmds[1], i, code, out)
		}
	}
	if n := e.runs("nightly-report"); n != 1 {
		t.Fatalf("want the report run once, have %d", n)
	}
}

// unitFile reads a unit's Key=Value lines; Environment= lines collect.
func unitFile(t *testing.T, name string) (map[string]string, []string) {
	b, err := os.ReadFile(filepath.Join(examplesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	var env []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
			if k == "Environment" {
				env = append(env, v)
			}
			m[k] = v
		}
	}
	return m, env
}

func TestExampleSystemdUnit(t *testing.T) {
	e := newExampleEnv(t)
	u, env := unitFile(t, "nightly-report.service")
	if u["Type"] != "oneshot" || u["KillMode"] != "mixed" || !strings.Contains(" "+u["SuccessExitStatus"]+" ", " 75 ") {
		t.Fatalf("want Type=oneshot, KillMode=mixed, SuccessExitStatus with 75; have %v", u)
	}
	if path, err := exec.LookPath("systemd-analyze"); err == nil {
		dir := t.TempDir()
		r := strings.NewReplacer("/usr/bin/leasewrap", filepath.Join(exampleBin(t), "leasewrap"))
		for _, name := range []string{"nightly-report.service", "nightly-report.timer"} {
			b, _ := os.ReadFile(filepath.Join(examplesDir, name))
			os.WriteFile(filepath.Join(dir, name), []byte(e.r.Replace(r.Replace(string(b)))), 0o644)
		}
		cmd := exec.Command(path, "verify", filepath.Join(dir, "nightly-report.service"), filepath.Join(dir, "nightly-report.timer"))
		cmd.Env = append(os.Environ(), "SYSTEMD_LOG_LEVEL=notice")
		if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "" {
			t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
		}
	} else {
		testutil.Need(t, "systemd-analyze (Debian package systemd)", err)
	}
	argv := strings.Fields(e.r.Replace(u["ExecStart"]))
	argv[0] = filepath.Join(exampleBin(t), "leasewrap")
	vars := []string{"PATH=/usr/bin:/bin", "LANG=C"} // systemd's default environment
	for _, kv := range env {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "DATABASE_URL":
			kv = "DATABASE_URL=" + e.dsn
		case "PGPASSFILE":
			kv = "PGPASSFILE=" + e.passfile
		}
		vars = append(vars, kv)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = vars, "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if out, err := cmd.CombinedOutput(); err != nil || e.runs("nightly-report") != 1 {
		t.Fatalf("%s: %v, %d runs\n%s", strings.Join(argv, " "), err, e.runs("nightly-report"), out)
	}
}
