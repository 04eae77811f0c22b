package supervisor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/cgroup"
	"github.com/leasewrap/leasewrap/internal/procstat"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// needCgroup skips where no job cgroup can be created, except under CI
// (root on a cgroup v2 host), where that is a failure.
func needCgroup(t *testing.T) {
	t.Helper()
	_, err := cgroup.Parent()
	testutil.Need(t, "a cgroup v2 directory", err)
}

// writePID is a shell fragment writing $$ atomically to path.
func writePID(path string) string {
	return fmt.Sprintf(`echo $$ > %s.tmp; mv %s.tmp %s`, path, path, path)
}

// A descendant that calls setsid is still part of the job in the cgroup
// form: the lease is not settled while it runs; it gets SIGTERM, then
// SIGKILL after the grace; leasewrap exits with the child's code. (In the
// process-group form it escapes: reliability/LOG.md.)
func TestSetsidDescendantStaysInTheCgroupJob(t *testing.T) {
	needCgroup(t)
	for _, m := range modes {
		for _, form := range []string{"auto", "cgroup"} {
			t.Run(m.name+"/"+form, func(t *testing.T) {
				dir := t.TempDir()
				pidf := filepath.Join(dir, "escapee.pid")
				script := fmt.Sprintf(`setsid sh -c 'trap "" TERM; %s; exec sleep 30' & while [ ! -s %s ]; do sleep 0.01; done; exit 0`, writePID(pidf), pidf)
				s := startSup(t, testEnv(dir, "T_ANCHORED="+m.anchored, "T_GRACE=500ms", "T_JOB="+form, "T_DEBUG=1"), "sh", "-c", script)
				esc := readPID(t, pidf)
				lease := filepath.Join(dir, "job.lease")
				for alive(esc) {
					if _, err := os.Stat(lease); err != nil && !exiting(esc) {
						t.Fatalf("lease settled while the setsid'd %d still runs: %v", esc, err)
					}
				}
				if have := s.wait(t); have != 0 {
					t.Fatalf("want 0 (the child's code), have %d\n%s", have, &s.stderr)
				}
				if alive(esc) {
					t.Fatalf("setsid'd %d still runs after leasewrap exited", esc)
				}
				contains(t, s.stderr.String(), "job form: cgroup")
				contains(t, s.stderr.String(), fmt.Sprintf("%d (", esc))
				if _, err := os.Stat(lease); !os.IsNotExist(err) {
					t.Fatalf("lease not released: %v", err)
				}
			})
		}
	}
}

// exiting reports whether pid ends within 2 s: a process leaves its
// cgroup (which then reads empty) in the kernel's exit path, after its
// memory and descriptors are released but a moment before /proc shows it
// as a zombie.
func exiting(pid int) bool {
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if !alive(pid) {
			return true
		}
	}
	return false
}

// A nested leasewrap is part of its outer job in both forms: when the
// outer lease is lost, the inner wrapper's TERM-ignoring job is gone by
// the time the outer exits 76 (before, the inner wrapper put it in a group
// of its own, and the outer's group kill never reached it).
func TestNestedLeasewrapDiesWithTheOuterJob(t *testing.T) {
	for _, form := range []string{"cgroup", "pgroup"} {
		for _, m := range modes {
			t.Run(form+"/"+m.name, func(t *testing.T) {
				if form == "cgroup" {
					needCgroup(t)
				}
				dir, inner := t.TempDir(), t.TempDir()
				pidf, jobf := filepath.Join(dir, "inner.pid"), filepath.Join(dir, "inner.job")
				script := fmt.Sprintf(`trap "" TERM; echo "$%s" > %s; %s; exec sleep 30`, JobEnv, jobf, writePID(pidf))
				env := testEnv(dir, "T_ANCHORED="+m.anchored, "T_PERIOD=50ms", "T_GRACE=300ms", "T_JOB="+form, "T_DEBUG=1", "T_SUBREAPER=1")
				s := startSup(t, env, "env", "T_DIR="+inner, "T_KEY=inner", "T_HOLDER=inner", os.Args[0], "sh", "-c", script)
				pid := readPID(t, pidf)
				job := strings.TrimSpace(readFile(t, jobf))
				st, err := procstat.Read(pid)
				if err != nil {
					t.Fatal(err)
				}
				// Where the inner job sits, read now, judged after the kill.
				var where string
				switch form {
				case "cgroup":
					// The inner job's cgroup is inside the outer one's.
					cg, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
					if err != nil || !strings.HasPrefix(job, "cgroup:") || strings.Count(string(cg), cgroup.Prefix) != 2 {
						where = fmt.Sprintf("want the inner job two cgroups deep (%s), have %q in %s", cgroup.Prefix, job, cg)
					}
				case "pgroup":
					// The inner command stayed in the outer job's group.
					if !isChildGroup(st.PGRP, s.cmd.Process.Pid) {
						where = fmt.Sprintf("inner command %d is in group %d, not the outer job's", pid, st.PGRP)
					}
				}
				os.WriteFile(filepath.Join(dir, "job.lease"), []byte("thief 1"), 0o644)
				if have := s.wait(t); have != 76 {
					t.Fatalf("want 76, have %d\n%s", have, &s.stderr)
				}
				if alive(pid) {
					t.Fatalf("the inner leasewrap's job %d still runs after the outer one exited 76\n%s", pid, &s.stderr)
				}
				if where != "" {
					t.Fatal(where)
				}
			})
		}
	}
}

// isChildGroup reports whether pgid is the group of the outer wrapper's
// child (its leader's parent is the outer wrapper).
func isChildGroup(pgid, outer int) bool {
	st, err := procstat.Read(pgid)
	return err != nil || st.PPID == outer // a gone leader: the group lives on
}

// Where no cgroup can be created, auto falls back to the process group
// and says why at debug level; --job cgroup refuses to run at all.
func TestJobFormFallsBackToTheProcessGroup(t *testing.T) {
	notCgroup := t.TempDir() // a plain directory: no cgroup.kill in what is made there
	t.Run("auto", func(t *testing.T) {
		dir := t.TempDir()
		have, s := runSup(t, testEnv(dir, "T_CGROUP_PARENT="+notCgroup, "T_DEBUG=1"), "sh", "-c", `echo "$`+JobEnv+`"`)
		if have != 0 {
			t.Fatalf("want 0, have %d\n%s", have, &s.stderr)
		}
		contains(t, s.stderr.String(), "job form: process group (no cgroup of its own)")
		contains(t, s.stderr.String(), "cgroup.kill")
		contains(t, s.stdout.String(), fmt.Sprintf("pgroup:%d", s.cmd.Process.Pid))
	})
	t.Run("cgroup", func(t *testing.T) {
		dir := t.TempDir()
		ran := filepath.Join(dir, "ran")
		have, s := runSup(t, testEnv(dir, "T_CGROUP_PARENT="+notCgroup, "T_JOB=cgroup"), "touch", ran)
		if have != 70 {
			t.Fatalf("want 70, have %d\n%s", have, &s.stderr)
		}
		contains(t, s.stderr.String(), "--job cgroup")
		if _, err := os.Stat(ran); !os.IsNotExist(err) {
			t.Fatal("the command ran")
		}
		if _, err := os.Stat(filepath.Join(dir, "job.lease")); !os.IsNotExist(err) {
			t.Fatal("the lease was taken")
		}
	})
	if ents, _ := os.ReadDir(notCgroup); len(ents) != 0 {
		t.Fatalf("want nothing left in %s, have %v", notCgroup, ents)
	}
}

// A systemd unit's cgroup not marked delegated (systemd before 251 marks
// none): auto falls back to the process group, --job cgroup uses it.
func TestUndelegatedUnitIsUsedOnlyWhenAskedFor(t *testing.T) {
	needCgroup(t)
	for _, form := range []string{"auto", "cgroup"} {
		t.Run(form, func(t *testing.T) {
			dir := t.TempDir()
			have, s := runSup(t, testEnv(dir, "T_CGROUP_UNDELEGATED=1", "T_JOB="+form, "T_DEBUG=1"), "sh", "-c", `echo "$`+JobEnv+`"`)
			if have != 0 {
				t.Fatalf("want 0, have %d\n%s", have, &s.stderr)
			}
			want := "pgroup:"
			if form == "cgroup" {
				want = "cgroup:"
				contains(t, s.stderr.String(), "--job cgroup uses it anyway")
			} else {
				contains(t, s.stderr.String(), "job form: process group")
			}
			if !strings.HasPrefix(s.stdout.String(), want) {
				t.Fatalf("want %s…, have %q\n%s", want, s.stdout.String(), &s.stderr)
			}
		})
	}
}

// An outer process-group job is joined only when the variable names a
// leasewrap that is really our ancestor (stale or foreign values are
// ignored; the true case runs in TestNestedLeasewrapDiesWithTheOuterJob).
func TestOuterGroupIgnoresWhatIsNotAnAncestor(t *testing.T) {
	other := exec.Command("sleep", "10")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	for _, v := range []string{"", "cgroup:/sys/fs/cgroup/x", "pgroup:", "pgroup:abc", "pgroup:0", "pgroup:-5",
		fmt.Sprintf("pgroup:%d", os.Getpid()), fmt.Sprintf("pgroup:%d", other.Process.Pid)} {
		if pid, ok := outerGroup(v); ok {
			t.Errorf("%s=%q: want not joined, have joined (outer %d)", JobEnv, v, pid)
		}
	}
}

// TestJobOOMScoreAboveLeasewrap (issue 23.3): the command's oom_score_adj
// is above leasewrap's, so an OOM kill in a limit both share picks the job
// (leasewrap lowered its own where it may, else raised the job's).
func TestJobOOMScoreAboveLeasewrap(t *testing.T) {
	// Where leasewrap lowers its own, it does so just after the command
	// started: the script waits (up to 5 s) for the two to differ.
	script := `i=0; while [ $i -lt 250 ]; do j=$(cat /proc/self/oom_score_adj); l=$(cat /proc/$PPID/oom_score_adj); [ "$j" != "$l" ] && break; i=$((i+1)); sleep 0.02; done; echo "job=$j leasewrap=$l"`
	cmd := exec.Command(os.Args[0], "sh", "-c", script)
	cmd.Env = testEnv(t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var job, lw int
	if _, err := fmt.Sscanf(string(out), "job=%d leasewrap=%d", &job, &lw); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	t.Logf("oom_score_adj: job %d, leasewrap %d", job, lw)
	if job <= lw && job != 1000 {
		t.Fatalf("want the job's oom_score_adj above leasewrap's, have job %d, leasewrap %d", job, lw)
	}
}
