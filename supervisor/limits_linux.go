package supervisor

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/cgroup"
)

// What leasewrap does so that the limits its job runs under — a pids
// limit or a memory limit on a cgroup both are in (systemd's TasksMax, a
// container's), see also the job cgroup's own pids.max (internal/cgroup)
// — end the job, never leasewrap: a supervisor killed by its job's fork
// bomb leaves the lease unrenewed and the job unsupervised.
//
// Threads: the Go runtime starts an OS thread whenever it needs one (a
// goroutine ready while every thread is busy or blocked in a system
// call); one it cannot start is fatal ("newosproc", exit 2). So where a
// limit on tasks applies, before the first command starts, leasewrap caps
// its Ps at maxProcs and makes the runtime start every thread it will
// need (reserveThreads): threads are never given back, so later work
// reuses them. Where leasewrap makes the job's cgroup and the pids
// controller is enabled there, the job's pids.max keeps pidsMargin tasks
// of the tightest limit above for leasewrap (jobform_linux.go). OOM: the
// job's oom_score_adj is set above leasewrap's (oomPlan).

// maxProcs caps leasewrap's GOMAXPROCS: supervision needs no parallelism,
// and every P is a thread that may be needed while the job runs. The job
// inherits the environment unchanged (a GOMAXPROCS there is the job's).
const maxProcs = 2

// spareThreads is how many threads beyond one per P leasewrap keeps for
// goroutines blocked in system calls at once, or locked (the tethered
// job's parent thread, the guard's wait4, a poll on cgroup.events, an
// fsync). The first LockOSThread also starts the runtime's template
// thread, which a locked thread needs to start others.
const spareThreads = 3

// oomDelta is how much more the job's oom_score_adj is than leasewrap's:
// with it, the OOM killer picks a job process before leasewrap unless
// leasewrap uses half the memory more than it (badness adds adj/1000 of
// the memory the limit covers to a process's resident size).
const oomDelta = 500

var (
	threadsOnce sync.Once
	threads     *reservation
	oomOnce     sync.Once
	oom         oomPlan
)

// pidsMargin is how many tasks of a pids limit above the job cgroup are
// kept for leasewrap (cgroup.Group.KeepPids): its threads and a tethered
// job's guard are made before the job starts, but a thread the runtime
// still wants later, or a helper (a hook, a straggler's stop), needs room.
const pidsMargin = 32

// reserveThreads starts, once per process (threads belong to the process,
// not to one Run), the reservation of the threads leasewrap needs, while
// the lease is being acquired; startLimits waits for it before the first
// command starts. Where no limit on tasks applies (see tasksLimited), it
// reserves nothing: a run then pays only for the check (about 20 µs).
func reserveThreads() {
	threadsOnce.Do(func() {
		if tasksLimited() {
			threads = reserve()
		}
	})
}

// tasksLimited reports whether the job may exhaust a limit on tasks that
// leasewrap's threads count against: a cgroup's pids.max (see
// cgroup.PidsLimited), or RLIMIT_NPROC for a user other than root (root
// is exempt from it).
func tasksLimited() bool {
	var rl unix.Rlimit
	if os.Geteuid() != 0 && (unix.Getrlimit(unix.RLIMIT_NPROC, &rl) != nil || rl.Cur != unix.RLIM_INFINITY) {
		return true
	}
	return cgroup.PidsLimited()
}

// startLimits is called before each start of a command of the job: the
// reserved threads exist before it runs, and the first call reads the
// oom_score_adj leasewrap was started with.
func startLimits() {
	reserveThreads()
	threads.ready()
	oomOnce.Do(func() { oom.base, oom.known = readOOMAdj("self") })
}

// reservation is, where tasks are limited, a set of goroutines each
// locked to an OS thread of its own until released: while all are locked
// at once, the runtime holds a thread for each of them and one more for
// the rest. Idle threads are kept by the runtime for later work (it never
// gives one back), and threads that already exist idle are reused, not
// added to. Each goroutine ends when released.
type reservation struct {
	locked  sync.WaitGroup
	release chan struct{}
	once    sync.Once
}

// reserve caps the Ps at maxProcs and has GOMAXPROCS+spareThreads
// goroutines lock a thread each: about 50 µs of CPU a thread created on
// the benchmark VM, overlapping the acquisition. Not an actor: bounded,
// each goroutine ends when released.
func reserve() *reservation {
	if runtime.GOMAXPROCS(0) > maxProcs {
		runtime.GOMAXPROCS(maxProcs)
	}
	n := runtime.GOMAXPROCS(0) + spareThreads
	r := &reservation{release: make(chan struct{})}
	r.locked.Add(n)
	for range n {
		go func() {
			runtime.LockOSThread()
			r.locked.Done()
			<-r.release
			runtime.UnlockOSThread() // before it ends: a goroutine ending locked takes its thread with it
		}()
	}
	return r
}

// ready waits until the threads exist, then lets the goroutines go.
func (r *reservation) ready() {
	if r != nil {
		r.locked.Wait()
		r.drop()
	}
}

// drop lets the goroutines go (a run that starts no command).
func (r *reservation) drop() {
	if r != nil {
		r.once.Do(func() { close(r.release) })
	}
}

// oomPlan keeps the job's oom_score_adj above leasewrap's. Where
// leasewrap may lower its own (root, CAP_SYS_RESOURCE), it does, once
// its first command started (base − oomDelta, the job keeps base: what
// leasewrap was started with, a unit's OOMScoreAdjust=); where it may not,
// the job gets base + oomDelta (anyone may raise a process's value). At
// base 1000, unprivileged, neither is possible and both stay at 1000.
type oomPlan struct {
	mu      sync.Mutex
	known   bool // base was read
	base    int  // leasewrap's oom_score_adj at its first start
	tried   bool // the first command started: leasewrap tried to lower its own
	lowered bool // and could
}

// started sets a just started command's oom_score_adj (pid: stopped
// before its exec, or just past it). Errors are ignored: the value is a
// preference, and a kernel without /proc/PID/oom_score_adj has no other.
func (o *oomPlan) started(pid int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.known {
		return
	}
	if !o.tried {
		// The command inherited base; leasewrap lowers its own after it.
		o.tried = true
		if own := max(o.base-oomDelta, -1000); own < o.base && writeOOMAdj("self", own) == nil {
			o.lowered = true
			return
		}
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
