package supervisor

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/procstat"
)

// The job is the child's process group: the child is its leader, and
// whatever it starts stays in it unless it calls setsid(2) or setpgid(2).
// The lease covers the job, so it is settled only once no live member of
// the group is left. Zombies do not count: a corpse nobody reaps still
// answers kill(-pgid, 0), but it does no work.

// member is a live process of a job's group.
type member struct {
	pid  int
	comm string
}

func (m member) String() string { return fmt.Sprintf("%d (%s)", m.pid, m.comm) }

// groupMembers lists the live (not zombie) processes of group pgid. A
// cheap kill(-pgid, 0) answers "empty" without reading /proc.
func groupMembers(pgid int) []member {
	if err := unix.Kill(-pgid, 0); err == unix.ESRCH {
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		// No /proc: trust kill(2), corpses included.
		return []member{{pid: -pgid, comm: "?"}}
	}
	var out []member
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := procstat.Read(pid)
		if err != nil || st.PGRP != pgid || !st.Live() {
			continue // gone meanwhile, another group, or a corpse
		}
		out = append(out, member{pid: pid, comm: st.Comm})
	}
	return out
}

// groupPoll is how often a group that is being emptied is looked at.
const groupPoll = 20 * time.Millisecond

// endGroup makes sure nothing of the job is left once its child has
// exited: the remaining members get SIGTERM (and SIGCONT, so a stopped one
// sees it), then SIGKILL after grace — at once when kill is set. It
// returns when the group is empty, reaping orphans meanwhile when reap is
// set (leasewrap is their subreaper). It returns the members it signalled.
func endGroup(pgid int, grace time.Duration, kill, reap bool) []member {
	left := groupMembers(pgid)
	if len(left) == 0 {
		return nil
	}
	sig := unix.SIGTERM
	if kill {
		sig = unix.SIGKILL
	}
	unix.Kill(-pgid, sig)
	unix.Kill(-pgid, unix.SIGCONT)
	killAt := time.Now().Add(grace)
	for {
		if reap {
			reapOrphans()
		}
		if len(groupMembers(pgid)) == 0 {
			return left
		}
		if sig != unix.SIGKILL && !time.Now().Before(killAt) {
			sig = unix.SIGKILL
			unix.Kill(-pgid, unix.SIGKILL)
		}
		time.Sleep(groupPoll)
	}
}
