// Package examples_test runs every example so none can rot: the demo, the
// crontab lines, the container entrypoint, and the shell and Go children.
package examples_test

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
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
	for _, want := range []string{"flock(1) -n exited 1", "with -q (a crontab line): exited 75, printed 0 bytes",
		"third flock wrapper ran after the holder exited", "flock(1) -n got the lock once every wrapper was done",
		"child.sh: holding flock", "second wrapper exited 75", "third wrapper ran after the holder exited", `{"key":"build:nightly","state":"free"}`,
		"retry exited 0 (replayed)", "fd 3 is locked", "done: every lease was settled",
		`leasewrap_runs_total{name="demo",kind="claim",outcome="success"} 1`, `leasewrap_runs_total{name="demo",kind="claim",outcome="failure"} 1`, `leasewrap_last_run_exit_code{name="demo",kind="claim"} 3`} {
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

// cronEnv is the environment cron gives a job (Debian's cron: PATH,
// HOME, SHELL, LOGNAME), with leasewrap's directory first on PATH as an
// installed leasewrap would be (/usr/bin).
func cronEnv(home string) []string {
	return []string{"PATH=" + binDir + ":/usr/bin:/bin", "HOME=" + home, "SHELL=/bin/sh", "LOGNAME=" + os.Getenv("USER")}
}

// cronFire runs line as cron runs it: sh -c LINE in HOME, with stdin from
// /dev/null, in a session of its own (no controlling terminal), in cron's
// environment. It returns the exit status and everything printed, which is
// what cron would mail.
func cronFire(line, home string) *exec.Cmd {
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.Dir = home
	cmd.Env = cronEnv(home)
	cmd.Stdin = nil // /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}

// cronRun fires line and waits (at most 30 s).
func cronRun(t *testing.T, line, home string) (int, string) {
	t.Helper()
	cmd := cronFire(line, home)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cronWait(t, cmd, &out)
}

func cronWait(t *testing.T, cmd *exec.Cmd, out *strings.Builder) (int, string) {
	t.Helper()
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	cmd.Wait()
	return cmd.ProcessState.ExitCode(), out.String()
}

// cronScratch makes the scratch machine a crontab line runs on: a home,
// the directories the lines name, fake jobs that record each run in a
// witness file and, while BLOCK exists, say READY and hold until GONE.
type cronScratch struct {
	home, witness, block, ready, gone string
	r                                 *strings.Replacer
}

func newCronScratch(t *testing.T) *cronScratch {
	home := t.TempDir()
	s := &cronScratch{home: home, witness: filepath.Join(home, "ran"), block: filepath.Join(home, "BLOCK"),
		ready: filepath.Join(home, "READY"), gone: filepath.Join(home, "GONE")}
	fake := func(name string) string {
		p := filepath.Join(home, name)
		script := "#!/bin/sh\necho " + name + " >> " + s.witness + "\n" +
			"if [ -e " + s.block + " ]; then touch " + s.ready + "; while [ ! -e " + s.gone + " ] && [ -d " + home + " ]; do sleep 0.02; done; fi\n"
		os.WriteFile(p, []byte(script), 0o755)
		return p
	}
	for _, d := range []string{"lock", "jobs", "orch", "node_exporter/textfile"} {
		os.MkdirAll(filepath.Join(home, d), 0o755)
	}
	s.r = strings.NewReplacer("/var/lock", filepath.Join(home, "lock"), "/var/lib/jobs", filepath.Join(home, "jobs"),
		"/var/lib/node_exporter", filepath.Join(home, "node_exporter"),
		"/var/lib/orchestratectl", filepath.Join(home, "orch"),
		"/usr/local/bin/sync-data", fake("sync-data"), "/usr/local/bin/export-day", fake("export-day"))
	return s
}

func (s *cronScratch) runs() int {
	b, _ := os.ReadFile(s.witness)
	return strings.Count(string(b), "\n")
}

func (s *cronScratch) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, err := os.Stat(s.ready); err != nil; _, err = os.Stat(s.ready) {
		if time.Now().After(deadline) {
			t.Fatal("the first fire's job never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCrontab runs every crontab line as cron would. Each line is silent
// when its job succeeds and when a fire is skipped because the previous
// one still runs (exit 75); the job runs once per fire it was not skipped,
// and a reservation's later fire replays, silently.
func TestCrontab(t *testing.T) {
	cmds := crontabCommands(t)
	if len(cmds) != 5 {
		t.Fatalf("want 5 crontab entries, have %d", len(cmds))
	}
	for _, c := range cmds {
		t.Run(strings.Fields(c)[2], func(t *testing.T) {
			s := newCronScratch(t)
			line := s.r.Replace(c)
			var pings *pingLog
			if strings.Contains(line, "hc-ping.com") {
				_, err := exec.LookPath("curl")
				testutil.Need(t, "curl", err)
				// The ping URL is a loopback server's; the splay is cut
				// to milliseconds (its delay is tested in cmd/leasewrap).
				pings = newPingLog(t)
				line = strings.NewReplacer("https://hc-ping.com", pings.URL, "--splay 10m", "--splay 10ms").Replace(line)
			}
			os.WriteFile(s.block, nil, 0o644)
			first := cronFire(line, s.home)
			var firstOut strings.Builder
			first.Stdout, first.Stderr = &firstOut, &firstOut
			if err := first.Start(); err != nil {
				t.Fatal(err)
			}
			s.waitReady(t)
			code, out := cronRun(t, line, s.home)
			if code != 75 || out != "" {
				t.Fatalf("%s\noverlapping fire: want 75 and silence, have %d:\n%s", line, code, out)
			}
			if n := s.runs(); n != 1 {
				t.Fatalf("%s\nthe job ran %d times while the first fire still ran", line, n)
			}
			os.WriteFile(s.gone, nil, 0o644)
			if code, out := cronWait(t, first, &firstOut); code != 0 || out != "" {
				t.Fatalf("%s\nfirst fire: want 0 and silence, have %d:\n%s", line, code, out)
			}
			os.Remove(s.block)
			if code, out := cronRun(t, line, s.home); code != 0 || out != "" {
				t.Fatalf("%s\nlater fire: want 0 and silence, have %d:\n%s", line, code, out)
			}
			want := 2
			if strings.Contains(line, "reserve run") {
				want = 1 // replayed
			}
			if n := s.runs(); n != want {
				t.Fatalf("%s\nwant the job run %d times, have %d", line, want, n)
			}
			if pings != nil {
				if have, want := pings.String(), "/UUID/start /UUID/0 /UUID/start /UUID/0"; have != want {
					t.Fatalf("%s\nwant the pings %q (none for the skipped fire), have %q", line, want, have)
				}
			}
			if strings.Contains(line, "--metrics-file") { // two runs, the overlapping fire a skip
				b, _ := os.ReadFile(filepath.Join(s.home, "node_exporter", "textfile", "sync-data.prom"))
				for _, want := range []string{`leasewrap_runs_total{name="sync-data",kind="flock",outcome="success"} 2`, `leasewrap_skips_total{name="sync-data",kind="flock",reason="held"} 1`} {
					if !strings.Contains(string(b), want+"\n") {
						t.Errorf("%s\nwant %s in the textfile:\n%s", line, want, b)
					}
				}
			}
		})
	}
}

// pingLog is a loopback HTTP server that records the paths it is pinged
// on, in order.
type pingLog struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newPingLog(t *testing.T) *pingLog {
	p := &pingLog{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.paths = append(p.paths, r.URL.Path)
		p.mu.Unlock()
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *pingLog) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.paths, " ")
}

// TestCrontabLossPrintsOneLine: a claim line whose claim is removed while
// its job runs prints exactly one line (cron mails it) and exits 76. The
// renewal period is shortened so the loss is seen at once.
func TestCrontabLossPrintsOneLine(t *testing.T) {
	for _, c := range crontabCommands(t) {
		if !strings.Contains(c, "claim run") {
			continue
		}
		s := newCronScratch(t)
		line := strings.Replace(s.r.Replace(c), " -- ", " --renew-every 100ms -- ", 1)
		os.WriteFile(s.block, nil, 0o644)
		cmd := cronFire(line, s.home)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		s.waitReady(t)
		claims, _ := filepath.Glob(filepath.Join(s.home, "jobs", ".fno", "claims", "*.lock"))
		if len(claims) != 1 {
			t.Fatalf("want one claim file, have %v", claims)
		}
		os.Remove(claims[0])
		code, text := cronWait(t, cmd, &out)
		if code != 76 || strings.Count(text, "\n") != 1 || !strings.Contains(text, "lost") {
			t.Fatalf("%s\nwant 76 and one line about the loss, have %d:\n%s", line, code, text)
		}
	}
}

// TestCrontabStragglersAreSilent: under -q a job that succeeds but leaves
// a process behind (stopped by leasewrap, with a warning without -q)
// prints nothing.
func TestCrontabStragglersAreSilent(t *testing.T) {
	s := newCronScratch(t)
	code, out := cronRun(t, "leasewrap -q flock run "+filepath.Join(s.home, "x.lock")+" --kill-grace 1s -- sh -c 'sleep 30 & exit 0'", s.home)
	if code != 0 || out != "" {
		t.Fatalf("want 0 and silence, have %d:\n%s", code, out)
	}
}

// TestCrontabMistakesAreNotSilent: -q keeps a usage error's line (cron
// mails it: someone must fix the crontab).
func TestCrontabMistakesAreNotSilent(t *testing.T) {
	s := newCronScratch(t)
	code, out := cronRun(t, "leasewrap -q flock run "+filepath.Join(s.home, "no", "dir", "x.lock")+" -- true", s.home)
	if code != 64 || strings.Count(out, "\n") != 1 || !strings.Contains(out, filepath.Join(s.home, "no", "dir")) {
		t.Fatalf("want 64 and one line naming the missing directory, have %d:\n%s", code, out)
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
			"flock":       {"flock", "run", filepath.Join(scratch, "nightly.lock")},
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

// cronTime matches the five time fields of a crontab line.
var cronTime = regexp.MustCompile(`^([0-9*/,-]+ ){4}[0-9*/,-]+$`)

// TestReadmeCrontabLinesAreTested: every crontab line the README and the
// pages its crontab text moved to show is one of examples/cron/crontab's,
// which TestCrontab runs as cron does.
func TestReadmeCrontabLinesAreTested(t *testing.T) {
	pages := []string{"../docs/USAGE.md", "../docs/FLOCK.md", "../docs/CLAIMS.md", "../docs/RESERVATIONS.md", "../docs/METRICS.md"}
	tested := map[string]bool{}
	f, _ := os.ReadFile("cron/crontab")
	for _, l := range strings.Split(string(f), "\n") {
		tested[strings.TrimSpace(l)] = true
	}
	n := 0
	for _, page := range append([]string{"../README.md"}, pages...) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			l = strings.TrimSpace(l)
			if fs := strings.Fields(l); len(fs) > 5 && fs[5] == "leasewrap" && cronTime.MatchString(strings.Join(fs[:5], " ")) {
				n++
				if !tested[l] {
					t.Errorf("%s: a crontab line that is not in examples/cron/crontab (so no test runs it):\n%s", page, l)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("found no crontab line in the README")
	}
}
