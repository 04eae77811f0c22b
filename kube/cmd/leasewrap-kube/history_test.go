package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leasewrap/leasewrap/kube/internal/kubetest"
)

// hjob is one run of the fenced job (kube/internal/elector, job.go), read
// back from the shared log.
type hjob struct {
	who            string // "wrapped" or an elector's identity
	fence          int64
	start, end     int64 // CLOCK_MONOTONIC ns; end 0: never logged
	startW, endW   int64 // wall clock ns
	pid, ppid      int
	wrote, refused bool
}

// jobLog is what the jobs logged.
type jobLog struct {
	jobs  []*hjob
	incs  [][2]int64 // (counter value, fence) in log order
	stale int
}

func readJobLog(t *testing.T, path string) *jobLog {
	t.Helper()
	h := &jobLog{}
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return h
		}
		t.Fatal(err)
	}
	defer f.Close()
	open := map[string]*hjob{} // pid/fence of a started job without an end yet
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		num := func(i int) int64 {
			if i >= len(fs) {
				return 0
			}
			n, _ := strconv.ParseInt(fs[i], 10, 64)
			return n
		}
		switch fs[0] {
		case "start":
			j := &hjob{start: num(1), fence: num(2), pid: int(num(3)), ppid: int(num(4)), who: fs[5], startW: num(6)}
			h.jobs = append(h.jobs, j)
			open[fs[2]] = j
		case "end":
			if j := open[fs[2]]; j != nil {
				j.end, j.endW = num(1), num(3)
				delete(open, fs[2])
			}
		case "inc":
			h.incs = append(h.incs, [2]int64{num(1), num(2)})
			if j := open[fs[2]]; j != nil {
				j.wrote = true
			}
		case "stale":
			h.stale++
			if j := open[fs[1]]; j != nil {
				j.refused = true
			}
		}
	}
	return h
}

// check verifies the guarded writes (the counter equals the number of
// writes logged, their values are 1..n, and in value order their fences
// never go down: no write with a stale fence went through), that no two
// jobs ran under one fence and that fences grow with the jobs' start
// times; it returns the largest overlap between two
// jobs. A job that could not log its end (killed with its holder) ends when
// it was seen gone (killedEnd, by pid), else now.
func (h *jobLog) check(t *testing.T, s *kubetest.Server, cm string, killedEnd map[int]int64) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := s.Admin.CoreV1().ConfigMaps(kubetest.Namespace).Get(ctx, cm, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	counter, _ := strconv.ParseInt(c.Data["counter"], 10, 64)
	bad, worst := h.violations(counter, killedEnd, kubetest.Mono())
	for _, b := range bad {
		t.Error(b)
	}
	return worst
}

// violations is check's verdict on the log, given the stored counter: what
// is wrong, and the largest overlap (jobs without an end end at
// killedEnd[pid], else at now).
func (h *jobLog) violations(counter int64, killedEnd map[int]int64, now int64) ([]string, time.Duration) {
	var bad []string
	if counter != int64(len(h.incs)) {
		bad = append(bad, fmt.Sprintf("lost writes: counter %d, %d writes logged", counter, len(h.incs)))
	}
	incs := append([][2]int64(nil), h.incs...)
	sort.Slice(incs, func(i, j int) bool { return incs[i][0] < incs[j][0] })
	for i, in := range incs {
		if in[0] != int64(i+1) {
			bad = append(bad, fmt.Sprintf("write values not 1..n: position %d has %d", i, in[0]))
			break
		}
		if i > 0 && in[1] < incs[i-1][1] {
			bad = append(bad, fmt.Sprintf("stale fence accepted: value %d with fence %d after fence %d", in[0], in[1], incs[i-1][1]))
		}
	}
	byFence := map[int64]*hjob{}
	for _, j := range h.jobs {
		if o := byFence[j.fence]; o != nil {
			bad = append(bad, fmt.Sprintf("two jobs ran under fence %d: %s (pid %d) and %s (pid %d)", j.fence, o.who, o.pid, j.who, j.pid))
		}
		byFence[j.fence] = j
	}
	js := append([]*hjob(nil), h.jobs...)
	sort.Slice(js, func(i, k int) bool { return js[i].start < js[k].start })
	for i := 1; i < len(js); i++ {
		if a, b := js[i-1], js[i]; b.fence <= a.fence {
			bad = append(bad, fmt.Sprintf("fences do not grow with start times: %s started after %s with fence %d <= %d", b.who, a.who, b.fence, a.fence))
		}
	}
	var worst time.Duration
	for i := range js {
		a := js[i]
		aEnd := a.end
		if aEnd == 0 {
			aEnd = killedEnd[a.pid]
		}
		if aEnd == 0 {
			aEnd = now
		}
		for k := i + 1; k < len(js); k++ {
			if b := js[k]; b.start < aEnd {
				if ov := time.Duration(aEnd - b.start); ov > worst {
					worst = ov
				}
			}
		}
	}
	return bad, worst
}

// TestKubeHistory runs many leasewrap-kube wrappers and client-go electors
// on one Lease, with and without faults (API server pauses, holder
// overwrites, SIGKILLs of wrappers and electors), every job doing a write
// guarded by its fence (a ConfigMap whose stored fence must not exceed the
// writer's, updated with a resourceVersion precondition). Checked: no lost
// or stale-fence write, one fence per job, fences growing with start
// times; without faults no two jobs overlap; with faults overlaps stay
// within the bound the faults allow. Bounded: a fixed number of
// participants and a time limit (KUBE_STRESS_LONG=1: more of both).
func TestKubeHistory(t *testing.T) {
	s := kubetest.Start(t)
	b := build(t)
	for _, faults := range []bool{false, true} {
		t.Run(fmt.Sprintf("faults=%v", faults), func(t *testing.T) { runKubeHistory(t, s, b, faults) })
	}
}

// Timing of the history participants: TTL 4 s for both kinds; wrappers
// fence 2 s after a renewal's start (grace 1 s, margin 1 s); electors stop
// leading 3 s (their renew deadline) after their last renewal.
var (
	histWrapFlags = []string{"--ttl", "4s", "--kill-grace", "1s", "--renew-every", "500ms", "--wait", "3m"}
	histElectArgs = []string{"--job", "--lease-duration", "4s", "--renew-deadline", "3s", "--retry-period", "500ms"}
)

func runKubeHistory(t *testing.T, s *kubetest.Server, b bins, faults bool) {
	participants, limit := 16, 90*time.Second
	if os.Getenv("KUBE_STRESS_LONG") != "" {
		participants, limit = 100, 15*time.Minute
	}
	name := fmt.Sprintf("hist-%v", faults)
	cm := name + "-guard"
	ctx := context.Background()
	if _, err := s.Admin.CoreV1().ConfigMaps(kubetest.Namespace).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: cm}, Data: map[string]string{"fence": "0", "counter": "0"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "jobs")
	deadline := time.Now().Add(limit)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	var procs []*kproc
	kinds := map[*kproc]string{}
	faultsDone := map[string]int{}
	killedEnd := map[int]int64{}
	t.Cleanup(s.Resume) // never leave it paused
	for i := 0; i < participants && time.Now().Before(deadline); i++ {
		sleep := time.Duration(300+rng.IntN(1200)) * time.Millisecond
		var p *kproc
		if rng.IntN(3) == 0 {
			p = startProc(t, b.elector, envJob(s, log, sleep, cm), append([]string{"lead", "--kubeconfig", s.Kubeconfig(kubetest.Admin),
				"--namespace", kubetest.Namespace, "--name", name, "--identity", fmt.Sprintf("elector-%d", i)}, histElectArgs...)...)
			kinds[p] = "elector"
		} else {
			p = wrap(t, b, s, kubetest.Runner, name, append([]string{"--identity", fmt.Sprintf("wrapper-%d", i)}, histWrapFlags...), envJob(s, log, sleep, cm), b.elector, "job")
			kinds[p] = "wrapper"
		}
		procs = append(procs, p)
		// The first four arrive together (a creation race), the rest
		// every 300-600 ms: a queue forms (jobs work 0.3-1.5 s), so a
		// fault usually meets a holder and waiters.
		if i >= 3 {
			time.Sleep(time.Duration(300+rng.IntN(300)) * time.Millisecond)
		}
		if !faults || rng.IntN(3) != 0 {
			continue
		}
		switch rng.IntN(3) {
		case 0: // pause the API server for 0.2-1.5 s
			s.Pause()
			time.Sleep(time.Duration(200+rng.IntN(1300)) * time.Millisecond)
			s.Resume()
			faultsDone["pause"]++
		case 1: // overwrite a holder, as a client-go elector taking over would
			l, err := s.Admin.CoordinationV1().Leases(kubetest.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err == nil && holderOf(l) != "" && overwriteHolder(s, name, fmt.Sprintf("intruder-%d", i), 1) == nil {
				faultsDone["overwrite"]++
			}
		case 2: // SIGKILL the holder (its process, not its group), else anyone
			running := map[int]bool{}
			for _, j := range readJobLog(t, log).jobs {
				if j.end == 0 {
					running[j.pid], running[j.ppid] = true, true
				}
			}
			sort.SliceStable(procs, func(i, k int) bool {
				return running[procs[i].Cmd.Process.Pid] && !running[procs[k].Cmd.Process.Pid]
			})
			for _, p := range procs {
				if !p.Running() {
					continue
				}
				p.Cmd.Process.Kill()
				faultsDone["sigkill-"+kinds[p]]++
				<-p.Done()
				// A wrapper's job must die with it; an elector's job is
				// the elector itself.
				for _, j := range readJobLog(t, log).jobs {
					if j.end == 0 && (j.ppid == p.Cmd.Process.Pid || j.pid == p.Cmd.Process.Pid) {
						waitGone(t, j.pid, 5*time.Second)
						killedEnd[j.pid] = kubetest.Mono()
					}
				}
				break
			}
		}
	}
	codes := map[string]int{}
	for _, p := range procs {
		code := p.wait(t, time.Until(deadline)+3*time.Minute)
		codes[fmt.Sprintf("%s:%d", kinds[p], code)]++
		if !faults && code != 0 {
			t.Errorf("without faults every participant exits 0; %s has %d:\n%s", kinds[p], code, p.output())
		}
		// 75 says the command did not run: the lease was not acquired
		// within --wait (3 min, longer than any fault here), or, seen
		// after holder overwrites, lost before the child started.
		if code == 75 {
			for _, j := range readJobLog(t, log).jobs {
				if j.ppid == p.Cmd.Process.Pid {
					t.Errorf("a %s exited 75 (did not run) but its job ran (fence %d):\n%s", kinds[p], j.fence, p.output())
				}
			}
		}
	}
	h := readJobLog(t, log)
	worst := h.check(t, s, cm, killedEnd)
	t.Logf("exit codes %v", codes)
	t.Logf("faults %v: %d jobs, %d guarded writes, %d refused as stale, worst overlap %v", faultsDone, len(h.jobs), len(h.incs), h.stale, worst)
	if !faults && worst > 0 {
		t.Errorf("without faults no two jobs may overlap; worst overlap %v", worst)
	}
	// The bound: after an overwrite, a client-go elector leads on until its
	// renew deadline (3 s) and a wrapper until its watch reports it plus
	// the kill grace (1 s); the intruder's record (1 s) must expire before
	// anyone else takes over. A pause shorter than the fence stops nobody;
	// a longer one fences the holder before its lease can expire. A
	// SIGKILLed holder's job dies with it. One more second for a loaded
	// machine.
	if bound := 3*time.Second + time.Second; worst > bound {
		t.Errorf("worst overlap %v exceeds the bound %v", worst, bound)
	}
	if len(h.jobs) == 0 {
		t.Errorf("no job ran")
	}
}

// overwriteHolder writes holder into the Lease, as a client-go elector
// taking over would (transitions + 1, duration dur seconds, times now).
func overwriteHolder(s *kubetest.Server, name, holder string, dur int32) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	leases := s.Admin.CoordinationV1().Leases(kubetest.Namespace)
	l, err := leases.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	now := metav1.NewMicroTime(time.Now())
	tr := transitionsOf(l) + 1
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.AcquireTime, l.Spec.RenewTime, l.Spec.LeaseTransitions = &holder, &dur, &now, &now, &tr
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	return err
}
