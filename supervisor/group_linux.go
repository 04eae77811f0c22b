package supervisor

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/procstat"
)

// In the process-group form (jobform_linux.go) the job is the child's
// process group: the child is its leader, and whatever it starts stays in
// it unless it calls setsid(2) or setpgid(2). The lease covers the job, so
// it is settled only once no live member of the group is left. Zombies do
// not count: a corpse nobody reaps still answers kill(-pgid, 0), but it
// does no work.

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
