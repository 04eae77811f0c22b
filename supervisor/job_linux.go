package supervisor

import (
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/cgroup"
	"github.com/leasewrap/leasewrap/internal/procstat"
)

// JobMode chooses what holds a job together: what the lease covers and stops.
type JobMode string

const (
	// JobAuto is a cgroup where one can be created, else the process group.
	JobAuto JobMode = "auto"
	// JobCgroup is a cgroup v2 of the job's own; the run fails without one.
	JobCgroup JobMode = "cgroup"
	// JobPgroup is the child's process group, which setsid or setpgid leaves.
	JobPgroup JobMode = "pgroup"
)

// JobEnv tells the command its job: "cgroup:<dir>" or "pgroup:<pid of
// leasewrap>", so a nested leasewrap stays inside it.
const JobEnv = "LEASEWRAP_JOB"

func (m JobMode) check() error {
	switch m {
	case "", JobAuto, JobCgroup, JobPgroup:
		return nil
	}
	return fmt.Errorf("supervisor: unknown job form %q (want auto, cgroup or pgroup)", m)
}

// jobForm is what holds one job together: a cgroup (cg) or the child's
// process group; joined when that group is an outer leasewrap's job.
type jobForm struct {
	cg       *cgroup.Group
	joined   bool
	pgid     int // the child's process group, once started
	guardPID int // the job guard: never a member of a joined job
	// lazy, while set: --job auto creates the cgroup before a wait or at the first start.
	lazy *Config
	log  *slog.Logger
}

// newJobForm decides the job's form; --job cgroup creates the cgroup now.
func (c *Config) newJobForm(log *slog.Logger) (*jobForm, error) {
	h := &jobForm{}
	if outer, ok := outerGroup(os.Getenv(JobEnv)); ok {
		h.joined = true
		log.Debug("inside the process-group job of an outer leasewrap; the command stays in its group", "outer_pid", outer, "pgid", unix.Getpgrp())
	}
	switch c.Job {
	case JobPgroup:
		log.Debug("job form: process group", "why", "--job pgroup")
	case JobCgroup:
		if err := h.create(c, log); err != nil {
			return nil, fmt.Errorf("supervisor: --job cgroup: %w (use --job auto or pgroup to run in a process group)", err)
		}
	default:
		h.lazy, h.log = c, log
	}
	return h, nil
}

// newCgroup creates a cgroup under the parent cgroup; --job cgroup accepts
// a systemd unit's cgroup not marked delegated (said on log, if not nil).
func (c *Config) newCgroup(log *slog.Logger) (*cgroup.Group, error) {
	dir, err := c.cgroupParent()
	if errors.Is(err, cgroup.ErrUndelegated) && c.Job == JobCgroup {
		if log != nil {
			log.Debug("our cgroup is a systemd unit's not marked delegated; --job cgroup uses it anyway", "why", err.Error())
		}
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return cgroup.Create(dir)
}

// create makes the job's cgroup, keeping pidsMargin tasks above it for leasewrap.
func (h *jobForm) create(c *Config, log *slog.Logger) error {
	cg, err := c.newCgroup(log)
	if err != nil {
		return err
	}
	h.cg = cg
	log.Debug("job form: cgroup", "cgroup", h.cg.Dir())
	if n, err := h.cg.KeepPids(pidsMargin); err != nil {
		log.Debug("could not limit the job cgroup's tasks", "err", err)
	} else if n > 0 {
		log.Debug("job cgroup limited to leave tasks for leasewrap", "pids_max", n, "kept", pidsMargin)
	}
	return nil
}

// outerGroup reads a process-group JobEnv and says whether we are still in
// that job: the leasewrap it names is an ancestor and our group's leader
// its child (or gone).
func outerGroup(v string) (int, bool) {
	pv, ok := strings.CutPrefix(v, "pgroup:")
	if !ok {
		return 0, false
	}
	outer, err := strconv.Atoi(pv)
	if err != nil || outer < 1 || outer == os.Getpid() {
		return 0, false
	}
	found := false
	for pid, i := os.Getpid(), 0; pid > 1 && i < 64; i++ {
		st, err := procstat.Read(pid)
		if err != nil {
			return 0, false
		}
		if st.PPID == outer {
			found = true
			break
		}
		pid = st.PPID
	}
	if !found {
		return 0, false
	}
	st, err := procstat.Read(unix.Getpgrp())
	if err != nil {
		return outer, outer != 1 // the leader is gone; its group lives on
	}
	return outer, st.PPID == outer
}

// ready creates a --job auto cgroup, once: before a wait, or at the first start.
func (h *jobForm) ready() {
	if c := h.lazy; c != nil {
		h.lazy = nil
		if err := h.create(c, h.log); err != nil {
			h.log.Debug("job form: process group (no cgroup of its own)", "why", err.Error())
		}
	}
}

// into makes cmd's child born into the job and sets JobEnv.
func (h *jobForm) into(cmd *exec.Cmd) {
	h.ready()
	cmd.SysProcAttr.Setpgid = !h.joined
	cmd.SysProcAttr.Foreground = cmd.SysProcAttr.Foreground && !h.joined
	v := "pgroup:" + strconv.Itoa(os.Getpid())
	if h.cg != nil {
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, h.cg.FD()
		v = "cgroup:" + h.cg.Dir()
	}
	cmd.Env = append(cmd.Env, JobEnv+"="+v)
}

// started makes h the started child's job.
func (h *jobForm) started(ch *child) {
	h.pgid = ch.pid
	if h.joined {
		h.pgid = unix.Getpgrp()
	}
	ch.form = h
}

// pgroupForm is the process-group form for a child of its own group.
func pgroupForm(pgid int) *jobForm { return &jobForm{pgid: pgid} }

// forward passes a signal on to the job's process group, or a joined job's members.
func (h *jobForm) forward(sig unix.Signal) error {
	if h.joined {
		return h.signal(sig)
	}
	return unix.Kill(-h.pgid, sig)
}

// signal sends sig to every member of the job (SIGKILL: cgroup.kill).
func (h *jobForm) signal(sig unix.Signal) error {
	switch {
	case h.cg != nil:
		if sig == unix.SIGKILL {
			if err := h.cg.Kill(); err == nil {
				return nil
			}
		}
		err := h.cg.Signal(sig)
		if !h.joined {
			unix.Kill(-h.pgid, sig)
		}
		return err
	case h.joined:
		for _, m := range h.members() {
			unix.Kill(m.pid, sig)
		}
		return nil
	}
	return unix.Kill(-h.pgid, sig)
}

// members lists the job's live processes; none means the job is over.
func (h *jobForm) members() []member {
	switch {
	case h.cg != nil:
		pop, err := h.cg.Populated()
		if (err == nil && !pop) || errors.Is(err, os.ErrNotExist) {
			return nil // a cgroup can only be removed once empty
		}
		pids, err := h.cg.Members()
		if err != nil && len(pids) == 0 {
			return []member{{pid: 0, comm: "?"}} // unreadable: not proven empty
		}
		out := make([]member, 0, len(pids))
		for _, pid := range pids {
			comm := "?"
			if st, err := procstat.Read(pid); err == nil {
				comm = st.Comm
			}
			out = append(out, member{pid: pid, comm: comm})
		}
		return out
	case h.joined:
		return descendants(os.Getpid(), h.guardPID)
	}
	return groupMembers(h.pgid)
}

// groupMembers lists the live processes of process group pgid.
func groupMembers(pgid int) []member {
	if unix.Kill(-pgid, 0) == unix.ESRCH {
		return nil // empty, without reading /proc
	}
	return liveProcs(func(_ int, st procstat.Stat) bool { return st.PGRP == pgid })
}

// guardMessage tells the guard what to kill: "J<pgid> <cgroup dir>\n"
// (pgid 0 for a joined job).
func (h *jobForm) guardMessage() []byte {
	pgid := h.pgid
	if h.joined {
		pgid = 0
	}
	dir := ""
	if h.cg != nil {
		dir = h.cg.Dir()
	}
	return fmt.Appendf(nil, "J%d %s\n", pgid, dir)
}

// String names the job for a log line.
func (h *jobForm) String() string {
	switch {
	case h.cg != nil:
		return "cgroup " + h.cg.Dir()
	case h.joined:
		return fmt.Sprintf("descendants of leasewrap %d in the outer job's process group %d", os.Getpid(), h.pgid)
	}
	return fmt.Sprintf("process group %d", h.pgid)
}

// close removes the job's cgroup if empty, and now and then sweeps stale ones.
func (h *jobForm) close(log *slog.Logger) {
	if h == nil || h.cg == nil {
		return
	}
	if mrand.IntN(cgroup.SweepEvery) == 0 {
		defer cgroup.Sweep(filepath.Dir(h.cg.Dir()))
	}
	if h.cg.Remove() {
		h.cg = nil
		return
	}
	if pop, err := h.cg.Populated(); err == nil && pop {
		log.Debug("job cgroup still has members; left in place", "cgroup", h.cg.Dir())
		return
	}
	if err := h.cg.Close(); err != nil {
		log.Warn("could not remove the job's cgroup", "err", err)
	}
	h.cg = nil
}

// descendants lists the live processes below pid, except skip's subtree.
func descendants(pid, skip int) []member {
	ppid := map[int]int{}
	all := liveProcs(func(p int, st procstat.Stat) bool { ppid[p] = st.PPID; return true })
	below := func(p int) bool {
		for i := 0; p > 1 && i < 64; i++ {
			if p = ppid[p]; p == pid {
				return true
			} else if p == skip && skip != 0 {
				return false
			}
		}
		return false
	}
	var out []member
	for _, m := range all {
		if m.pid != skip && below(m.pid) {
			out = append(out, m)
		}
	}
	return out
}

// member is a live process of a job.
type member struct {
	pid  int
	comm string
}

func (m member) String() string { return fmt.Sprintf("%d (%s)", m.pid, m.comm) }

// liveProcs lists the live processes keep accepts; without /proc, one unknown.
func liveProcs(keep func(int, procstat.Stat) bool) []member {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return []member{{pid: 0, comm: "?"}}
	}
	var out []member
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := procstat.Read(pid); err == nil && st.Live() && keep(pid, st) {
			out = append(out, member{pid: pid, comm: st.Comm})
		}
	}
	return out
}

// stopForShell handles a job stopped by ^Z: leasewrap takes the terminal
// back and stops itself; continued, it gives the job the terminal again.
func (r *runner) stopForShell(ch *child) {
	if !r.foreground {
		return
	}
	stdin := r.cfg.Stdin
	setForeground(stdin, unix.Getpgrp())
	unix.Kill(os.Getpid(), unix.SIGSTOP)
	if foregroundTTY(stdin) {
		setForeground(stdin, ch.form.pgid) // fg: the job gets the terminal again
	}
	ch.form.signal(unix.SIGCONT)
}

// setForeground makes pgid the terminal's foreground group, SIGTTOU blocked.
func setForeground(tty *os.File, pgid int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set, old unix.Sigset_t
	set.Val[0] = 1 << (uint(unix.SIGTTOU) - 1)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old); err != nil {
		return err
	}
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	return unix.IoctlSetPointerInt(int(tty.Fd()), unix.TIOCSPGRP, pgid)
}
