package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/kube/internal/kubetest"
)

// kproc is a leasewrap-kube or client-go elector (kube/internal/elector)
// process in its own process group, for the tests against a real API
// server (kubetest).
type kproc struct {
	*testutil.Group
	out    testutil.Buffer // stderr (and stdout of leasewrap-kube)
	events chan electorEvent
}

// electorEvent is a line of `elector lead` (its Event type).
type electorEvent struct {
	Event    string `json:"event"`
	Identity string `json:"identity"`
	Leader   string `json:"leader"`
	Fence    int64  `json:"fence"`
	UnixNano int64  `json:"unix_nano"`
	Mono     int64  `json:"mono"`
	Error    string `json:"error"`
}

func (p *kproc) output() string { return p.out.String() }

// startProc starts bin with args and extra environment; an elector's
// standard output is parsed into events.
func startProc(t *testing.T, bin string, env []string, args ...string) *kproc {
	t.Helper()
	p := &kproc{events: make(chan electorEvent, 100)}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = &p.out
	// Gone with the test binary, should a timeout kill it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if len(args) > 0 && args[0] == "lead" {
		cmd.Stdout = testutil.NewLines(func(l string) {
			var e electorEvent
			if json.Unmarshal([]byte(l), &e) == nil {
				select {
				case p.events <- e:
				default: // nobody reads them: drop
				}
			}
		})
	} else {
		cmd.Stdout = &p.out
	}
	p.Group = testutil.StartGroup(t, cmd)
	return p
}

// wait returns the exit code, failing the test after d (stretched by
// testutil.Scale).
func (p *kproc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	d = testutil.Scale(d)
	select {
	case <-p.Done():
		return p.Code()
	case <-time.After(d):
		t.Fatalf("%s still running after %v; output:\n%s", strings.Join(p.Cmd.Args, " "), d, p.output())
		return -1
	}
}

// event waits up to d for the elector's next event of kind, skipping
// others; it fails the test when the elector ends first.
func (p *kproc) event(t *testing.T, kind string, d time.Duration) electorEvent {
	t.Helper()
	d = testutil.Scale(d)
	timeout := time.After(d)
	for {
		select {
		case e := <-p.events:
			if e.Event == kind {
				return e
			}
		case <-p.Done():
			// Events still buffered were sent before the end.
			for {
				select {
				case e := <-p.events:
					if e.Event == kind {
						return e
					}
				default:
					t.Fatalf("elector ended (%d) without %q; stderr:\n%s", p.Code(), kind, p.output())
				}
			}
		case <-timeout:
			t.Fatalf("elector: no %q within %v; stderr:\n%s", kind, d, p.output())
		}
	}
}

// noEvent fails the test if the elector reports kind within d.
func (p *kproc) noEvent(t *testing.T, kind string, d time.Duration) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case e := <-p.events:
			if e.Event == kind {
				t.Fatalf("elector %s: unexpected %q (%+v)", e.Identity, kind, e)
			}
		case <-timeout:
			return
		}
	}
}

// bins are the executables under test, built once per test binary.
type bins struct{ lw, elector string }

func build(t *testing.T) bins {
	t.Helper()
	return bins{lw: kubetest.Build(t, "./cmd/leasewrap-kube"), elector: kubetest.Build(t, "./internal/elector")}
}

// wrap starts `leasewrap-kube kube run NAME` as user u with flags, then
// the command.
func wrap(t *testing.T, b bins, s *kubetest.Server, u kubetest.User, name string, flags []string, env []string, cmd ...string) *kproc {
	t.Helper()
	args := []string{"kube", "run", name, "--kubeconfig", s.Kubeconfig(u), "--namespace", kubetest.Namespace}
	args = append(append(append(args, flags...), "--"), cmd...)
	return startProc(t, b.lw, env, args...)
}

// elect starts `elector lead` for the Lease name as the runner (the same
// minimal Role as leasewrap's).
func elect(t *testing.T, b bins, s *kubetest.Server, name, identity string, flags ...string) *kproc {
	t.Helper()
	args := []string{"lead", "--kubeconfig", s.Kubeconfig(kubetest.Runner), "--namespace", kubetest.Namespace, "--name", name, "--identity", identity}
	return startProc(t, b.elector, nil, append(args, flags...)...)
}

// getLease reads the Lease as the admin.
func getLease(t *testing.T, s *kubetest.Server, name string) *coordv1.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := s.Admin.CoordinationV1().Leases(kubetest.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get lease %s: %v", name, err)
	}
	return l
}

func holderOf(l *coordv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func transitionsOf(l *coordv1.Lease) int32 {
	if l.Spec.LeaseTransitions == nil {
		return 0
	}
	return *l.Spec.LeaseTransitions
}

// leaseWatch records every version of a Lease the admin sees, from its
// start until the test ends.
type leaseWatch struct {
	mu   sync.Mutex
	seen []coordv1.LeaseSpec
}

func watchLease(t *testing.T, s *kubetest.Server, name string) *leaseWatch {
	t.Helper()
	lw := &leaseWatch{}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		first := true
		for ctx.Err() == nil {
			w, err := s.Admin.CoordinationV1().Leases(kubetest.Namespace).Watch(ctx, metav1.ListOptions{
				FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(),
			})
			if first {
				close(started)
				first = false
			}
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				if l, ok := ev.Object.(*coordv1.Lease); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
					lw.mu.Lock()
					lw.seen = append(lw.seen, *l.Spec.DeepCopy())
					lw.mu.Unlock()
				}
			}
		}
	}()
	<-started
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return lw
}

// count is the number of versions seen.
func (lw *leaseWatch) count() int {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return len(lw.seen)
}

// lastRenewal is the latest renewTime among the versions held by holder.
func (lw *leaseWatch) lastRenewal(holder string) (time.Time, int32) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	var last time.Time
	var dur int32
	for _, s := range lw.seen {
		if s.HolderIdentity != nil && *s.HolderIdentity == holder && s.RenewTime != nil && s.RenewTime.After(last) {
			last = s.RenewTime.Time
			if s.LeaseDurationSeconds != nil {
				dur = *s.LeaseDurationSeconds
			}
		}
	}
	return last, dur
}

// waitFile waits up to d for path to be written whole and returns it.
func waitFile(t *testing.T, path string, d time.Duration) string {
	return testutil.WaitFile(t, path, d)
}

// waitGone waits up to d for pid to be gone and returns how long it took.
func waitGone(t *testing.T, pid int, d time.Duration) time.Duration {
	return testutil.WaitGone(t, pid, d)
}

// envJob is the environment of an `elector job` child: its log, how long
// it works, and (cm non-empty) the ConfigMap of its guarded write.
func envJob(s *kubetest.Server, log string, sleep time.Duration, cm string) []string {
	env := []string{"KUBETEST_JOB_LOG=" + log, "KUBETEST_JOB_SLEEP=" + sleep.String(), "KUBETEST_JOB_KUBECONFIG=" + s.Kubeconfig(kubetest.Admin)}
	if cm != "" {
		env = append(env, "KUBETEST_JOB_CONFIGMAP="+kubetest.Namespace+"/"+cm)
	}
	return env
}

// shJob is a shell job that writes its environment's LEASEWRAP_FENCE and
// pid to file (atomically) and then runs rest.
func shJob(file, rest string) []string {
	return []string{"sh", "-c", fmt.Sprintf(`printf '%%s %%s\n' "$LEASEWRAP_FENCE" $$ > %s.tmp && mv %s.tmp %s && %s`, file, file, file, rest)}
}

// readShJob waits for shJob's file and returns the fence and pid.
func readShJob(t *testing.T, file string, d time.Duration) (fence int64, pid int) {
	t.Helper()
	f := strings.Fields(waitFile(t, file, d))
	if len(f) != 2 {
		t.Fatalf("%s: want FENCE PID, have %q", file, f)
	}
	fence, err1 := strconv.ParseInt(f[0], 10, 64)
	pid, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: want FENCE PID, have %q", file, f)
	}
	return fence, pid
}
