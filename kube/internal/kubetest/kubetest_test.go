package kubetest

import (
	"context"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestServer checks what the harness promises: each user's kubeconfig
// authenticates as documented, the runner's Role can be removed and
// restored, a paused server does not answer and a restarted one keeps its
// data.
func TestServer(t *testing.T) {
	s := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := func(u User) *kubernetes.Clientset {
		cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig(u))
		if err != nil {
			t.Fatal(err)
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	lease := &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}
	if _, err := client(Runner).CoordinationV1().Leases(Namespace).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatalf("runner: create a lease in %s: %v", Namespace, err)
	}
	if _, err := client(Runner).CoordinationV1().Leases("default").Get(ctx, "probe", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("runner: get a lease in default: want 403, have %v", err)
	}
	if _, err := client(Runner).CoreV1().ConfigMaps(Namespace).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("runner: list configmaps: want 403, have %v", err)
	}
	if _, err := client(NoGrants).CoordinationV1().Leases(Namespace).Get(ctx, "probe", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("nogrants: want 403, have %v", err)
	}
	if _, err := client(BadToken).CoordinationV1().Leases(Namespace).Get(ctx, "probe", metav1.GetOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("badtoken: want 401, have %v", err)
	}
	if _, err := client(Admin).CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); err != nil {
		t.Errorf("admin: %v", err)
	}

	s.RemoveRole(t)
	if _, err := client(Runner).CoordinationV1().Leases(Namespace).Get(ctx, "probe", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("runner without its Role: want 403, have %v", err)
	}
	s.RestoreRole(t)
	if _, err := client(Runner).CoordinationV1().Leases(Namespace).Get(ctx, "probe", metav1.GetOptions{}); err != nil {
		t.Errorf("runner with its Role restored: %v", err)
	}

	s.Pause()
	pctx, pcancel := context.WithTimeout(ctx, time.Second)
	_, err := s.Admin.CoordinationV1().Leases(Namespace).Get(pctx, "probe", metav1.GetOptions{})
	pcancel()
	s.Resume()
	if err == nil {
		t.Errorf("a paused API server answered")
	}
	if err := s.WaitReady(ReadyTimeout); err != nil {
		t.Fatalf("after resume: %v", err)
	}

	pid := s.APIServer.PID()
	gone := s.Restart(t)
	if s.APIServer.PID() == pid {
		t.Errorf("restart: same pid %d", pid)
	}
	if _, err := client(Runner).CoordinationV1().Leases(Namespace).Get(ctx, "probe", metav1.GetOptions{}); err != nil {
		t.Errorf("after restart: the lease is gone or unreadable: %v", err)
	}
	t.Logf("restart: the API server was away %v", gone)
}
