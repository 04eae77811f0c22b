package reliability

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/cgroup"
	"github.com/leasewrap/leasewrap/internal/procstat"
	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/supervisor"
)

// localKinds are the kinds a job test runs under: "the job is everything
// it started", across the real binary and every local kind.
var localKinds = []kind{kindClaimPID, kindClaimTTL, kindReserve, kindSession, kindFlock}

// escapeScript leaves a setsid'd, TERM-ignoring process behind, writes
// its pid to pidf and exits 0 (the repro, with the pid recorded);
// its own pid goes to pidf.sh first.
func escapeScript(pidf string) string {
	return fmt.Sprintf(`echo $$ > %[1]s.sh; setsid sh -c 'trap "" TERM; echo $$ > %[1]s.tmp; mv %[1]s.tmp %[1]s; exec sleep 30' & while [ ! -s %[1]s ]; do sleep 0.01; done; exit 0`, pidf)
}

// readPIDFile waits up to 10 s for a pid written to path, failing at once
// if the leasewrap run on done ends first.
func readPIDFile(t *testing.T, path string, done <-chan result) int {
	t.Helper()
	for deadline := time.Now().Add(testutil.Scale(10 * time.Second)); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		select {
		case r := <-done:
			t.Fatalf("leasewrap ended before %s was written: %v", path, r)
		default:
		}
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return pid
			}
		}
	}
	t.Fatalf("%s not written within %v", path, testutil.Scale(10*time.Second))
	return 0
}

func running(pid int) bool { return procstat.Running(pid) }

// runToExit is runBounded with the output in a file, not a pipe: it
// returns when leasewrap exits, not when the last process holding its
// stderr (a survivor of the job) closes it.
func runToExit(t *testing.T, cmd *exec.Cmd) result {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Error(err)
		return result{code: -1}
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	if cmd, err = startRetryingTxtBusy(cmd); err != nil {
		t.Errorf("start %s: %v", cmd.Path, err)
		return result{code: -1}
	}
	timer := time.AfterFunc(testutil.Scale(time.Minute), func() { cmd.Process.Kill() })
	err = cmd.Wait()
	b, _ := os.ReadFile(f.Name())
	if !timer.Stop() {
		b = append(b, "\n(test: SIGKILLed by runToExit's deadline)\n"...)
	}
	return resultOf(cmd, err, "", string(b))
}

// A descendant that calls setsid stays in the job (cgroup form, the
// default here): while it runs, the lease is held — a second wrapper of
// the key exits 75 — and leasewrap waits for it; once it is gone the lease
// is settled and leasewrap exits with the command's 0. With a short
// --kill-grace, leasewrap kills it itself. A pid-only claim (--ttl 0) ends
// with the command's pid, so its remainder is killed at once.
func TestSetsidEscapeeKeepsTheLease(t *testing.T) {
	strictJobs(t)
	for _, k := range localKinds {
		t.Run(strings.ReplaceAll(k.name, "/", "_"), func(t *testing.T) {
			e := newEnv(t)
			key := k.keyFor()
			pidf := filepath.Join(e.dir, "escapee.pid")
			pidOnly := k.name == kindClaimPID.name
			// The escapee ignores TERM and the grace is long: it lives
			// until this test kills it, so the probe below is decided.
			args := append(k.args(e, key), "--kill-grace", "30s", "--", "sh", "-c", escapeScript(pidf))
			done := make(chan result, 1)
			go func() { done <- runBounded(t, e.lwCmd(nil, args...), nil) }()
			esc := readPIDFile(t, pidf, done)
			// The command has exited: from now on the escapee is a
			// straggler of the job.
			sh := readPIDFile(t, pidf+".sh", done)
			for deadline := time.Now().Add(10 * time.Second); running(sh); time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the command %d still runs 10 s after its escapee started", sh)
				}
			}
			if pidOnly {
				r := <-done
				if r.code != 0 || running(esc) || !strings.Contains(r.err, "how=SIGKILL") {
					t.Fatalf("pid-only claim: want exit 0 with the escapee %d killed at once, have running=%v %v", esc, running(esc), r)
				}
				noOrphans(t)
				return
			}
			probe := e.lw(e.childEnv("probe", 0, 0), append(append(k.args(e, key), "--"), e.childArgv()...)...)
			if !running(esc) {
				t.Fatalf("escapee %d gone before the probe ended", esc)
			}
			if probe.code != 75 {
				t.Fatalf("while the setsid'd %d runs the lease must be held: want the probe's 75, have %v", esc, probe)
			}
			select {
			case r := <-done:
				t.Fatalf("leasewrap exited while the setsid'd %d runs: %v", esc, r)
			default:
			}
			syscall.Kill(esc, syscall.SIGKILL)
			r := <-done
			if r.code != 0 || !strings.Contains(r.err, fmt.Sprintf("%d (", esc)) {
				t.Fatalf("want exit 0 naming the straggler %d, have %v", esc, r)
			}
			after := e.lw(e.childEnv("after", 0, 0), append(append(k.args(e, key), "--"), e.childArgv()...)...)
			if after.code != 0 {
				t.Fatalf("key blocked after the job ended: %v", after)
			}

			// The kill grace: leasewrap itself ends the escapee.
			os.Remove(pidf)
			key2 := key
			if k.name == kindReserve.name {
				key2 = key + "-2" // the first key's run is published: it would replay
			}
			args = append(k.args(e, key2), "--kill-grace", "300ms", "--", "sh", "-c", escapeScript(pidf))
			r = runBounded(t, e.lwCmd(nil, args...), nil)
			esc = readPIDFile(t, pidf, nil)
			if r.code != 0 || running(esc) {
				t.Fatalf("want exit 0 with the escapee %d gone, have running=%v %v", esc, running(esc), r)
			}
			noOrphans(t)
		})
	}
}

// takeClaim rewrites the claim at path from holder from to holder to as
// the claims protocol lets a writer: under the key's recovery mutex (a
// renewal re-reads the claim inside it) and by temp file and rename.
// Written without the mutex, the take could land between a renewal's read
// and its replace and be overwritten: the holder would never lose.
func takeClaim(t *testing.T, path, from, to string) {
	t.Helper()
	mutex := path + ".recovery.d"
	testutil.WaitFor(t, "the claim's recovery mutex "+mutex, 10*time.Second, func() bool { return os.Mkdir(mutex, 0o755) == nil })
	defer os.Remove(mutex)
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "holder: "+from) {
		t.Fatalf("claim %s: want holder %s, have %v:\n%s", path, from, err, b)
	}
	tmp := filepath.Join(filepath.Dir(path), ".claim-tmp-take")
	if err := os.WriteFile(tmp, []byte(strings.Replace(string(b), "holder: "+from, "holder: "+to, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// A nested leasewrap is part of its outer job, in both forms: the outer
// claim is taken from it (another holder), the outer stops its job and
// exits 76, and by then the inner wrapper's TERM-ignoring command is gone,
// whatever kind the inner one runs.
func TestNestedLeasewrapEndsWithTheOuterLease(t *testing.T) {
	for _, form := range []string{"cgroup", "pgroup"} {
		for _, inner := range []kind{kindClaimPID, kindReserve, kindSession, kindFlock} {
			t.Run(form+"/"+strings.ReplaceAll(inner.name, "/", "_"), func(t *testing.T) {
				if form == "cgroup" {
					strictJobs(t)
				}
				e := newEnv(t)
				outerRoot := filepath.Join(e.dir, "outer")
				pidf := filepath.Join(e.dir, "inner.pid")
				script := fmt.Sprintf(`trap "" TERM; echo $$ > %[1]s.tmp; mv %[1]s.tmp %[1]s; exec sleep 30`, pidf)
				args := []string{"claim", "run", "outer", "--root", outerRoot, "--holder", "outer-h", "--ttl", "1m",
					"--renew-every", "100ms", "--kill-grace", "300ms", "--job", form, "--", lwBin}
				args = append(append(args, inner.args(e, inner.keyFor())...), "--job", form, "--", "sh", "-c", script)
				done := make(chan result, 1)
				go func() { done <- runToExit(t, e.lwCmd(nil, args...)) }()
				pid := readPIDFile(t, pidf, done)
				// Another holder takes the outer claim: the next renewal
				// finds it held_by_other, the lease is lost.
				takeClaim(t, filepath.Join(outerRoot, ".fno", "claims", "outer.lock"), "outer-h", "thief")
				r := <-done
				alive := running(pid)
				syscall.Kill(pid, syscall.SIGKILL)
				if r.code != 76 {
					t.Fatalf("want 76, have %v", r)
				}
				if alive {
					t.Fatalf("the inner wrapper's command %d outlived the outer lease:\n%s", pid, r.err)
				}
				noOrphans(t)
			})
		}
	}
}

// Where leasewrap may not write its cgroup (here: a real unprivileged
// user, uid 65534, on a host whose cgroups root owns), --job auto runs the
// job as a process group and says why at debug level; --job cgroup exits
// 70 and runs nothing.
func TestJobFormFallsBackForAnUnprivilegedUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to switch to uid 65534")
	}
	_, err := cgroup.Parent()
	testutil.Need(t, "a cgroup v2 directory root can create (else the fallback is every run's)", err)
	base, err := os.MkdirTemp("", "leasewrap-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755) // uid 65534 must reach the binary
	bin := filepath.Join(base, "leasewrap")
	if b, err := os.ReadFile(lwBin); err != nil || os.WriteFile(bin, b, 0o755) != nil {
		t.Fatal("copy leasewrap", err)
	}
	root := filepath.Join(base, "claims")
	os.Mkdir(root, 0o755)
	os.Chown(root, 65534, 65534)
	ran := filepath.Join(root, "ran")
	run := func(job string) result {
		cmd := exec.Command(bin, "--log-level", "debug", "claim", "run", "k-"+job, "--root", root, "--job", job,
			"--", "sh", "-c", `echo "$`+supervisor.JobEnv+`"; touch `+ran)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "FNO_EVENTS_PATH=/dev/null", "LEASEWRAP_LOG_FORMAT=text"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var out, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &stderr
		err := cmd.Run()
		return resultOf(cmd, err, out.String(), stderr.String())
	}
	r := run("auto")
	if r.code != 0 || !strings.HasPrefix(r.out, "pgroup:") || !strings.Contains(r.err, "job form: process group") || !strings.Contains(r.err, "not writable") {
		t.Fatalf("auto as uid 65534: want 0, a process-group job and the reason logged, have %v", r)
	}
	os.Remove(ran)
	r = run("cgroup")
	if r.code != 70 || !strings.Contains(r.err, "--job cgroup") {
		t.Fatalf("--job cgroup as uid 65534: want 70 naming the flag, have %v", r)
	}
	if _, err := os.Stat(ran); !os.IsNotExist(err) {
		t.Fatal("--job cgroup without a cgroup ran the command")
	}
}
