package kubetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// createRBAC creates Namespace, the runner's Role and its RoleBinding.
func (s *Server) createRBAC() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if _, err := s.Admin.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", Namespace, err)
	}
	if _, err := s.Admin.RbacV1().Roles(Namespace).Create(ctx, runnerRole(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create role %s/%s: %w", Namespace, RunnerRole, err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: RunnerRole, Namespace: Namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: RunnerRole},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: string(Runner)}},
	}
	if _, err := s.Admin.RbacV1().RoleBindings(Namespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create rolebinding %s/%s: %w", Namespace, RunnerRole, err)
	}
	return s.waitRunnerAllowed(ctx, true)
}

func runnerRole() *rbacv1.Role {
	return &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: RunnerRole, Namespace: Namespace},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"coordination.k8s.io"},
			Resources: []string{"leases"},
			Verbs:     RunnerVerbs,
		}},
	}
}

// RemoveRole deletes the runner's Role (the RoleBinding stays) and waits
// until the API server forbids the runner to get leases: from then on
// every request of the runner about leases is answered 403.
func (s *Server) RemoveRole(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Admin.RbacV1().Roles(Namespace).Delete(ctx, RunnerRole, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("kubetest: delete role %s/%s: %v", Namespace, RunnerRole, err)
	}
	if err := s.waitRunnerAllowed(ctx, false); err != nil {
		t.Fatalf("kubetest: %v", err)
	}
}

// RestoreRole creates the runner's Role again and waits until the runner
// may get leases.
func (s *Server) RestoreRole(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Admin.RbacV1().Roles(Namespace).Create(ctx, runnerRole(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("kubetest: create role %s/%s: %v", Namespace, RunnerRole, err)
	}
	if err := s.waitRunnerAllowed(ctx, true); err != nil {
		t.Fatalf("kubetest: %v", err)
	}
}

// waitRunnerAllowed waits until a get of a lease by the runner is (or is
// not) forbidden: the RBAC authorizer follows Role changes through an
// informer, a few milliseconds late.
func (s *Server) waitRunnerAllowed(ctx context.Context, allowed bool) error {
	c, err := newClientset(s.Config(Runner))
	if err != nil {
		return err
	}
	for {
		_, err := c.CoordinationV1().Leases(Namespace).Get(ctx, "kubetest-rbac-probe", metav1.GetOptions{})
		if apierrors.IsForbidden(err) != allowed && (err == nil || apierrors.IsNotFound(err) || apierrors.IsForbidden(err)) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the runner's access to leases in %s did not become allowed=%v (last answer: %v)", Namespace, allowed, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
