package supervisor

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/cgroup"
)

// maxProcs caps GOMAXPROCS where tasks are limited: every P is a thread.
const maxProcs = 2

// spareThreads are threads beyond one per P, for blocked or locked goroutines.
const spareThreads = 3

// oomDelta is how much more the job's oom_score_adj is than leasewrap's.
const oomDelta = 500

var (
	limitsOnce sync.Once
	limited    bool  // tasks are limited: the threads were made
	limitsErr  error // a pids limit with no room for the threads
	oom        oomPlan
)

// pidsMargin is how many tasks of a pids limit are kept for leasewrap.
const pidsMargin = 32

// startLimits does, once, what every start needs and no lease decides; a
// waiter calls it before it waits, and every start before it forks. Where
// tasks are limited it makes the threads leasewrap needs (a thread the
// runtime cannot start later is fatal); it lowers leasewrap's own
// oom_score_adj; and it runs Go's one-time pidfd probe (a throwaway child
// at the first os.StartProcess). Its error says a pids limit has no room.
func startLimits() error {
	limitsOnce.Do(func() {
		room, at, err := cgroup.PidsRoom() // unreadable counts as limited
		if limited = nprocLimited() || err != nil || room >= 0; limited {
			limitsErr = makeThreads(room, at)
		}
		oom.lowerOwn()
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			p.Release()
		}
	})
	return limitsErr
}

// nprocLimited reports whether RLIMIT_NPROC, which leasewrap's threads
// count against, applies (it does not to root).
func nprocLimited() bool {
	var rl unix.Rlimit
	return os.Geteuid() != 0 && (unix.Getrlimit(unix.RLIMIT_NPROC, &rl) != nil || rl.Cur != unix.RLIM_INFINITY)
}

// makeThreads caps the Ps and makes GOMAXPROCS+spareThreads threads, each
// locked by a goroutine and then let go (the runtime keeps them idle),
// unless the pids limit at (room tasks left, PidsRoom) has no room for
// them: the runtime aborts on a thread it cannot start, so the run ends
// with an error instead.
func makeThreads(room int64, at string) error {
	if runtime.GOMAXPROCS(0) > maxProcs {
		runtime.GOMAXPROCS(maxProcs)
	}
	n := runtime.GOMAXPROCS(0) + spareThreads
	// Each locked goroutine may need a new thread; so may the goroutine
	// that waits for them, and the runtime's template thread.
	if room >= 0 && room < int64(n+2) {
		return fmt.Errorf("supervisor: the pids limit of %s has room for %d more tasks, and leasewrap needs up to %d for its threads before it waits or starts the command: raise %s/pids.max (systemd TasksMax=, a container's pids limit)", at, room, n+2, at)
	}
	var locked sync.WaitGroup
	release := make(chan struct{})
	locked.Add(n)
	for range n {
		go func() {
			runtime.LockOSThread()
			locked.Done()
			<-release
			runtime.UnlockOSThread() // before it ends: a goroutine ending locked takes its thread with it
		}()
	}
	locked.Wait()
	close(release)
	return nil
}

// oomPlan keeps the job's oom_score_adj above leasewrap's: leasewrap lowers
// its own where it may (root), else the job gets base + oomDelta.
// Set once by startLimits, read-only after.
type oomPlan struct {
	known   bool // base was read
	base    int  // leasewrap's oom_score_adj as it started
	lowered bool // leasewrap lowered its own to base - oomDelta
}

// lowerOwn reads leasewrap's oom_score_adj and lowers it where it may.
func (o *oomPlan) lowerOwn() {
	if o.base, o.known = readOOMAdj("self"); o.known {
		own := max(o.base-oomDelta, -1000)
		o.lowered = own < o.base && writeOOMAdj("self", own) == nil
	}
}

// started sets a just started command's oom_score_adj; errors are ignored.
func (o *oomPlan) started(pid int) {
	if !o.known {
		return
	}
	inherited, want := o.base, min(o.base+oomDelta, 1000)
	if o.lowered {
		inherited, want = max(o.base-oomDelta, -1000), o.base
	}
	if want != inherited {
		writeOOMAdj(strconv.Itoa(pid), want)
	}
}

func readOOMAdj(pid string) (int, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/oom_score_adj")
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return n, err == nil
}

func writeOOMAdj(pid string, v int) error {
	return os.WriteFile("/proc/"+pid+"/oom_score_adj", []byte(strconv.Itoa(v)), 0)
}
