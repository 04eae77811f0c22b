// Package examples_test runs every example so none can rot: the demo, the
// crontab lines, the container entrypoint, and the shell and Go children.
package examples_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var binDir string // holds leasewrap and gochild, built once

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "leasewrap-examples")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	for pkg, name := range map[string]string{"../cmd/leasewrap": "leasewrap", "./gochild": "gochild"} {
		build := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // as `make build`
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", pkg, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is a scratch environment with leasewrap first on PATH.
func env(t *testing.T) (scratch string, vars []string) {
	scratch = t.TempDir()
	vars = append(os.Environ(), "PATH="+binDir+":"+os.Getenv("PATH"),
		"FNO_EVENTS_PATH="+filepath.Join(scratch, "events.jsonl"), "ORCHESTRATECTL_HOME="+filepath.Join(scratch, "orch"), "HOME="+scratch)
	return scratch, vars
}

func run(t *testing.T, vars []string, name string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = vars
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

func TestDemo(t *testing.T) {
	_, vars := env(t)
	code, out := run(t, vars, "./demo.sh", filepath.Join(binDir, "leasewrap"))
	if code != 0 {
		t.Fatalf("demo exited %d:\n%s", code, out)
	}
	for _, want := range []string{"second wrapper exited 75", "third wrapper ran after the holder exited", `{"key":"build:nightly","state":"free"}`,
		"retry exited 0 (replayed)", "fd 3 is locked", "done: every lease was settled",
		`leasewrap_runs_total{kind="claim",key="metrics:demo",outcome="ran"} 2`, `leasewrap_last_exit_code{kind="claim",key="metrics:demo"} 3`} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in the demo's output:\n%s", want, out)
		}
	}
	if strings.Contains(out, "never printed") {
		t.Errorf("a refused or replayed command ran:\n%s", out)
	}
}

// crontabCommands returns the command part of each crontab entry, with
// cron's \% unescaped.
func crontabCommands(t *testing.T) []string {
	f, err := os.Open("cron/crontab")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		cmds = append(cmds, strings.ReplaceAll(strings.Join(fields[5:], " "), `\%`, "%"))
	}
	return cmds
}

func TestCrontab(t *testing.T) {
	cmds := crontabCommands(t)
	if len(cmds) != 2 {
		t.Fatalf("want 2 crontab entries, have %d", len(cmds))
	}
	scratch, vars := env(t)
	witness := filepath.Join(scratch, "ran")
	fake := func(name string) string {
		p := filepath.Join(scratch, name)
		os.WriteFile(p, []byte("#!/bin/sh\necho "+name+" >> "+witness+"\n"), 0o755)
		return p
	}
	r := strings.NewReplacer("/var/lib/jobs", scratch, "/var/lib/orchestratectl", filepath.Join(scratch, "orch"),
		"/usr/local/bin/sync-data", fake("sync-data"), "/usr/local/bin/export-day", fake("export-day"))
	for _, c := range cmds {
		for fire := 0; fire < 2; fire++ {
			if code, out := run(t, vars, "sh", "-c", r.Replace(c)); code != 0 {
				t.Fatalf("%s (fire %d): exited %d\n%s", c, fire, code, out)
			}
		}
	}
	b, _ := os.ReadFile(witness)
	if got, want := string(b), "sync-data\nsync-data\nexport-day\n"; got != want {
		t.Fatalf("want sync twice and the export once per date, have %q", got)
	}
}

func TestEntrypointForwardsStopAndPassesStatus(t *testing.T) {
	scratch, vars := env(t)
	vars = append(vars, "SESSION_ID=5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42", "SESSION_ROOT="+filepath.Join(scratch, "bcode"))
	ready := filepath.Join(scratch, "ready")
	daemon := fmt.Sprintf(`trap 'echo stopping; exit 0' TERM; touch %s; while :; do sleep 0.02; done`, ready)
	cmd := exec.Command("./container/entrypoint.sh", "sh", "-c", daemon)
	cmd.Env = vars
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, err := os.Stat(ready); err != nil; _, err = os.Stat(ready) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("daemon never started:\n%s", &out)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM) // docker stop
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("entrypoint did not stop:\n%s", &out)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(out.String(), "stopping") {
		t.Fatalf("want the daemon's clean 0 after SIGTERM, have %d:\n%s", code, &out)
	}
	if !strings.Contains(out.String(), `"msg":"lease acquired; child started"`) {
		t.Fatalf("want JSON logs:\n%s", &out)
	}
}

func TestChildrenUnderEveryKind(t *testing.T) {
	for _, child := range []string{"./shell/child.sh", filepath.Join(binDir, "gochild")} {
		abs, _ := filepath.Abs(child)
		scratch, vars := env(t)
		kinds := map[string][]string{
			"claim":       {"claim", "run", "build:nightly", "--root", scratch},
			"reservation": {"reserve", "run", "export-2026-11-29"},
			"session":     {"session", "run", "5f0c6d4e-3b1a-4f59-9b8e-0d7f2a9c1e42", "--root", filepath.Join(scratch, "bcode"), "--epoch", "6"},
		}
		for kind, args := range kinds {
			t.Run(filepath.Base(child)+"/"+kind, func(t *testing.T) {
				code, out := run(t, vars, filepath.Join(binDir, "leasewrap"), append(args, "--", abs)...)
				if code != 0 || !strings.Contains(out, "holding "+kind) {
					t.Fatalf("want exit 0 and the child holding its %s, have %d:\n%s", kind, code, out)
				}
				if kind != "claim" && !strings.Contains(out, "fd 3") {
					t.Fatalf("want the child to find its locked fd 3:\n%s", out)
				}
			})
		}
		if code, out := run(t, vars, abs); code != 2 {
			t.Fatalf("%s alone: want 2 (refuses to run unprotected), have %d:\n%s", child, code, out)
		}
	}
}
