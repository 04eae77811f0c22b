package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/leasewrap/leasewrap/kube/internal/kubetest"
)

// Event is one line of lead's output.
type Event struct {
	Event    string `json:"event"`            // started-leading, stopped-leading, new-leader, exit
	Identity string `json:"identity"`         // this elector
	Leader   string `json:"leader,omitempty"` // new-leader: who leads now
	Fence    int64  `json:"fence,omitempty"`  // started-leading with --job: leaseTransitions
	UnixNano int64  `json:"unix_nano"`        // wall clock
	Mono     int64  `json:"mono"`             // CLOCK_MONOTONIC, comparable across processes
	Error    string `json:"error,omitempty"`  // exit: why, if not a clean end
}

func lead(args []string) int {
	fs := flag.NewFlagSet("elector lead", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file")
	namespace := fs.String("namespace", "default", "the Lease's namespace")
	name := fs.String("name", "", "the Lease's name")
	identity := fs.String("identity", "", "holder identity")
	leaseDuration := fs.Duration("lease-duration", 15*time.Second, "LeaseDuration")
	renewDeadline := fs.Duration("renew-deadline", 10*time.Second, "RenewDeadline")
	retryPeriod := fs.Duration("retry-period", 2*time.Second, "RetryPeriod")
	release := fs.Bool("release-on-cancel", true, "ReleaseOnCancel")
	hold := fs.Duration("hold", 0, "stop leading after this long (0: until SIGTERM)")
	job := fs.Bool("job", false, "run the fenced job (configured by KUBETEST_JOB_*) while leading, then give the lease up")
	klog.InitFlags(fs)
	if err := fs.Parse(args); err != nil {
		return 64
	}
	if *name == "" || *identity == "" || *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "elector lead: --kubeconfig, --name and --identity are required")
		return 64
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "elector: %s: %v\n", *kubeconfig, err)
		return 1
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "elector: %v\n", err)
		return 1
	}
	var outMu sync.Mutex
	enc := json.NewEncoder(os.Stdout)
	emit := func(e Event) {
		e.Identity, e.UnixNano, e.Mono = *identity, time.Now().UnixNano(), kubetest.Mono()
		outMu.Lock()
		defer outMu.Unlock()
		enc.Encode(e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		cancel()
	}()
	// OnStartedLeading runs in a goroutine of its own, possibly after Run
	// has already returned: st orders the two events.
	var st struct {
		sync.Mutex
		leading, stopped bool
		wg               sync.WaitGroup
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Name: *name, Namespace: *namespace},
			Client:     cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: *identity},
		},
		LeaseDuration:   *leaseDuration,
		RenewDeadline:   *renewDeadline,
		RetryPeriod:     *retryPeriod,
		ReleaseOnCancel: *release,
		Name:            *name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				st.Lock()
				if st.stopped { // Run returned first
					st.Unlock()
					emit(Event{Event: "started-leading"})
					emit(Event{Event: "stopped-leading"})
					return
				}
				st.leading = true
				st.wg.Add(1)
				st.Unlock()
				defer st.wg.Done()
				if !*job {
					emit(Event{Event: "started-leading"})
				} else {
					leadJob(lctx, cs, *namespace, *name, *identity, emit)
					cancel() // one job per election: give the lease up
					return
				}
				if *hold > 0 {
					select {
					case <-time.After(*hold):
						cancel()
					case <-lctx.Done():
					}
				}
			},
			OnStoppedLeading: func() {
				st.Lock()
				defer st.Unlock()
				st.stopped = true
				if st.leading {
					emit(Event{Event: "stopped-leading"})
				}
			},
			OnNewLeader: func(id string) { emit(Event{Event: "new-leader", Leader: id}) },
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "elector: %v\n", err)
		return 64
	}
	le.Run(ctx)
	st.Lock()
	st.stopped = true
	st.Unlock()
	st.wg.Wait()
	emit(Event{Event: "exit"})
	return 0
}
