package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/leasewrap/leasewrap/kube/internal/kubetest"
)

// The fenced test job. It appends one line per event to the log file
// $KUBETEST_JOB_LOG (one write each, O_APPEND: lines of concurrent jobs do
// not mix), stamped with CLOCK_MONOTONIC:
//
//	start MONO FENCE PID PPID WHO WALL   WHO: "wrapped" or the elector's identity
//	inc VALUE FENCE                      the guarded write went through
//	stale FENCE STORED                   the guard refused it: a later fence wrote first
//	end MONO FENCE WALL                  on its own end or on SIGTERM
//
// (MONO: CLOCK_MONOTONIC, WALL: Unix time, both in nanoseconds.)
//
// The guarded write: read the ConfigMap $KUBETEST_JOB_CONFIGMAP (NS/NAME;
// data "fence" and "counter"); if its fence is greater than ours, refuse;
// else update it to our fence and counter+1 with its resourceVersion as
// precondition (a conflict: read again). The job then works
// $KUBETEST_JOB_SLEEP long. The variable names are not LEASEWRAP_ ones,
// which the supervisor keeps from its child.
const (
	envLog        = "KUBETEST_JOB_LOG"
	envSleep      = "KUBETEST_JOB_SLEEP"
	envConfigMap  = "KUBETEST_JOB_CONFIGMAP"
	envKubeconfig = "KUBETEST_JOB_KUBECONFIG"
)

// jobMain is `elector job`: the child of leasewrap-kube.
func jobMain() int {
	fence, err := strconv.ParseInt(os.Getenv("LEASEWRAP_FENCE"), 10, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "elector job: LEASEWRAP_FENCE=%q: %v\n", os.Getenv("LEASEWRAP_FENCE"), err)
		return 90
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer cancel()
	if err := runJob(ctx, nil, fence, "wrapped"); err != nil {
		fmt.Fprintf(os.Stderr, "elector job: %v\n", err)
		return 91
	}
	if ctx.Err() != nil {
		return 143
	}
	return 0
}

// runJob logs start, does the guarded write (when a ConfigMap is named),
// works until the sleep ends or ctx is done, and logs end. cs is the
// client for the write; nil: one from $KUBETEST_JOB_KUBECONFIG.
func runJob(ctx context.Context, cs kubernetes.Interface, fence int64, who string) error {
	f, err := os.OpenFile(os.Getenv(envLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", envLog, err)
	}
	defer f.Close()
	logf := func(format string, a ...any) { f.WriteString(fmt.Sprintf(format, a...) + "\n") }
	logf("start %d %d %d %d %s %d", kubetest.Mono(), fence, os.Getpid(), os.Getppid(), who, time.Now().UnixNano())
	defer func() { logf("end %d %d %d", kubetest.Mono(), fence, time.Now().UnixNano()) }()
	sleep, _ := time.ParseDuration(os.Getenv(envSleep))
	end := time.NewTimer(sleep)
	defer end.Stop()
	if cmName := os.Getenv(envConfigMap); cmName != "" {
		if cs == nil {
			cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(envKubeconfig))
			if err != nil {
				return fmt.Errorf("%s: %w", envKubeconfig, err)
			}
			if cs, err = kubernetes.NewForConfig(cfg); err != nil {
				return err
			}
		}
		if err := guardedWrite(ctx, cs, cmName, fence, logf); err != nil {
			return err
		}
	}
	select {
	case <-end.C:
	case <-ctx.Done():
	}
	return nil
}

// guardedWrite is the fenced write: at most 20 rounds of read, compare,
// update-with-precondition.
func guardedWrite(ctx context.Context, cs kubernetes.Interface, nsName string, fence int64, logf func(string, ...any)) error {
	ns, name, ok := strings.Cut(nsName, "/")
	if !ok {
		return fmt.Errorf("%s=%q: want NAMESPACE/NAME", envConfigMap, nsName)
	}
	cms := cs.CoreV1().ConfigMaps(ns)
	for range 20 {
		if ctx.Err() != nil {
			return nil // stopped before it wrote: nothing to log
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		cm, err := cms.Get(rctx, name, metav1.GetOptions{})
		cancel()
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return fmt.Errorf("get configmap %s: %w", nsName, err)
		}
		stored, _ := strconv.ParseInt(cm.Data["fence"], 10, 64)
		if stored > fence {
			logf("stale %d %d", fence, stored)
			return nil
		}
		n, _ := strconv.ParseInt(cm.Data["counter"], 10, 64)
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data["fence"] = strconv.FormatInt(fence, 10)
		cm.Data["counter"] = strconv.FormatInt(n+1, 10)
		// The write itself is not cancelled by ctx: once sent it may land,
		// and a write that lands must be logged.
		wctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = cms.Update(wctx, cm, metav1.UpdateOptions{})
		cancel()
		switch {
		case err == nil:
			logf("inc %d %d", n+1, fence)
			return nil
		case apierrors.IsConflict(err):
			continue // another writer moved it: read again
		default:
			return fmt.Errorf("update configmap %s: %w", nsName, err)
		}
	}
	return fmt.Errorf("configmap %s contended 20 times", nsName)
}

// leadJob is the elector's job: its fence is the Lease's leaseTransitions
// as client-go wrote it on our acquisition.
func leadJob(ctx context.Context, cs kubernetes.Interface, ns, name, identity string, emit func(Event)) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	l, err := cs.CoordinationV1().Leases(ns).Get(rctx, name, metav1.GetOptions{})
	cancel()
	if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != identity {
		emit(Event{Event: "started-leading", Error: fmt.Sprintf("lease %s/%s not ours when read (%v)", ns, name, err)})
		return
	}
	var fence int64
	if l.Spec.LeaseTransitions != nil {
		fence = int64(*l.Spec.LeaseTransitions)
	}
	emit(Event{Event: "started-leading", Fence: fence})
	if err := runJob(ctx, cs, fence, identity); err != nil {
		fmt.Fprintf(os.Stderr, "elector %s: job: %v\n", identity, err)
	}
}
