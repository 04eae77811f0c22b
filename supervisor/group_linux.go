package supervisor

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/procstat"
)

// The job is the child's process group: the child is its leader, and
// whatever it starts stays in it unless it calls setsid(2) or setpgid(2).
// The lease covers the job, so it is settled only once no live member of
// the group is left. Zombies do not count: a corpse nobody reaps still
// answers kill(-pgid, 0), but it does no work. jobHold (jobform_linux.go)
// is the one place that knows the job's form, and uses procGroup for this
// one: signalling it, and listing what is left.

// procGroup is a job in the process-group form.
type procGroup struct{ pgid int }

// member is a live process of a job.
type member struct {
	pid  int
	comm string
}

func (m member) String() string { return fmt.Sprintf("%d (%s)", m.pid, m.comm) }

// signal sends sig to every member of the job.
func (g procGroup) signal(sig unix.Signal) error { return unix.Kill(-g.pgid, sig) }

// members lists the job's live (not zombie) processes; none means the
// job is over. A cheap kill(-pgid, 0) answers "empty" without reading
// /proc.
func (g procGroup) members() []member {
	if err := unix.Kill(-g.pgid, 0); err == unix.ESRCH {
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		// No /proc: trust kill(2), corpses included.
		return []member{{pid: -g.pgid, comm: "?"}}
	}
	var out []member
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := procstat.Read(pid)
		if err != nil || st.PGRP != g.pgid || !st.Live() {
			continue // gone meanwhile, another group, or a corpse
		}
		out = append(out, member{pid: pid, comm: st.Comm})
	}
	return out
}
