package examples_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// unitSettings reads a unit file's Key=Value lines (comments skipped; the
// last of a repeated key wins, as for these keys in systemd).
func unitSettings(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			m[k] = v
		}
	}
	return m
}

// systemdScratch copies the example units into a scratch directory with
// leasewrap, the fake job and /run/lock pointing into it.
func systemdScratch(t *testing.T) (s *cronScratch, unitDir string) {
	t.Helper()
	s = newCronScratch(t)
	unitDir = filepath.Join(s.home, "units")
	os.Mkdir(unitDir, 0o755)
	r := strings.NewReplacer("/usr/bin/leasewrap", filepath.Join(binDir, "leasewrap"), "/run/lock", filepath.Join(s.home, "lock"))
	for _, name := range []string{"sync-data.service", "sync-data.timer"} {
		b, err := os.ReadFile(filepath.Join("systemd", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(unitDir, name), []byte(s.r.Replace(r.Replace(string(b)))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return s, unitDir
}

// TestSystemdUnitsVerify checks the example units with systemd-analyze
// verify (installed by .ci/run): no error and no warning.
func TestSystemdUnitsVerify(t *testing.T) {
	_, err := exec.LookPath("systemd-analyze")
	testutil.Need(t, "systemd-analyze (Debian package systemd)", err)
	_, dir := systemdScratch(t)
	cmd := exec.Command("systemd-analyze", "verify", filepath.Join(dir, "sync-data.service"), filepath.Join(dir, "sync-data.timer"))
	cmd.Env = append(os.Environ(), "SYSTEMD_LOG_LEVEL=notice")
	out, err := cmd.CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) != 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestSystemdUnitAgreesWithLeasewrap checks the settings the unit's
// comments promise against its ExecStart line, then runs that line as
// systemd does (split into words, no shell): the job runs; a fire while
// flock(1) holds the lock exits with a status SuccessExitStatus accepts;
// and `systemctl stop` under KillMode=mixed (SIGTERM to leasewrap alone)
// reaches the job once, after which the lock is free.
func TestSystemdUnitAgreesWithLeasewrap(t *testing.T) {
	s, dir := systemdScratch(t)
	u := unitSettings(t, filepath.Join(dir, "sync-data.service"))
	argv := strings.Fields(u["ExecStart"])
	line := strings.Join(argv, " ")
	if u["KillMode"] != "mixed" || u["Delegate"] != "yes" || u["Type"] != "oneshot" {
		t.Fatalf("want KillMode=mixed, Delegate=yes, Type=oneshot, have %v", u)
	}
	grace := 10 * time.Second // leasewrap's default
	if m := regexp.MustCompile(`--kill-grace[ =](\S+)`).FindStringSubmatch(line); m != nil {
		d, err := time.ParseDuration(m[1])
		if err != nil {
			t.Fatal(err)
		}
		grace = d
	}
	stop, err := time.ParseDuration(u["TimeoutStopSec"])
	if err != nil {
		t.Fatalf("TimeoutStopSec %q: %v", u["TimeoutStopSec"], err)
	}
	if stop < grace+10*time.Second {
		t.Fatalf("TimeoutStopSec %v must exceed --kill-grace %v plus the job's shutdown and settling (10s kept)", stop, grace)
	}
	conflict := "75"
	if m := regexp.MustCompile(`--conflict-exit-code[ =](\d+)`).FindStringSubmatch(line); m != nil {
		conflict = m[1]
	}
	if !strings.Contains(" "+u["SuccessExitStatus"]+" ", " "+conflict+" ") {
		t.Fatalf("SuccessExitStatus=%s does not accept leasewrap's conflict code %s", u["SuccessExitStatus"], conflict)
	}
	lock := argv[3]

	exe := func() *exec.Cmd {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C"} // systemd's default environment
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		return cmd
	}
	if out, err := exe().CombinedOutput(); err != nil || s.runs() != 1 {
		t.Fatalf("%s: %v, %d runs\n%s", line, err, s.runs(), out)
	}

	ready, gone := filepath.Join(s.home, "f.ready"), filepath.Join(s.home, "f.gone")
	holder := exec.Command("flock", lock, "sh", "-c", "touch "+ready+"; while [ ! -e "+gone+" ] && [ -d "+s.home+" ]; do sleep 0.02; done")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	waitExists(t, ready)
	cmd := exe()
	out, _ := cmd.CombinedOutput()
	if have := strconv.Itoa(cmd.ProcessState.ExitCode()); have != conflict || s.runs() != 1 {
		t.Fatalf("while flock(1) holds %s: want exit %s and no run, have %s, %d runs\n%s", lock, conflict, have, s.runs(), out)
	}
	os.WriteFile(gone, nil, 0o644)
	holder.Wait()

	// systemctl stop, KillMode=mixed: SIGTERM to the main process only.
	job := filepath.Join(s.home, "job.sh")
	os.WriteFile(job, []byte("#!/bin/sh\ntrap 'echo term >> "+s.witness+"; exit 0' TERM\ntouch "+s.ready+"\nwhile [ -d "+s.home+" ]; do sleep 0.02; done\n"), 0o755)
	argv[len(argv)-1] = job
	main := exe()
	var mainOut strings.Builder
	main.Stdout, main.Stderr = &mainOut, &mainOut
	if err := main.Start(); err != nil {
		t.Fatal(err)
	}
	waitExists(t, s.ready)
	main.Process.Signal(syscall.SIGTERM)
	if code, text := cronWait(t, main, &mainOut); code != 0 {
		t.Fatalf("stop: want the job's 0 after its TERM trap, have %d\n%s", code, text)
	}
	b, _ := os.ReadFile(s.witness)
	if strings.Count(string(b), "term") != 1 {
		t.Fatalf("want the job to get SIGTERM once, have:\n%s", b)
	}
	if err := exec.Command("flock", "-n", lock, "true").Run(); err != nil {
		t.Fatalf("the lock is still held after the stop: %v", err)
	}
}

func waitExists(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, err := os.Stat(path); err != nil; _, err = os.Stat(path) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
