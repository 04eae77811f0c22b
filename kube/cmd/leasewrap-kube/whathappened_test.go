package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/kube/internal/kubetest"
)

// editLease changes the Lease name as the admin (another writer), retrying
// on a conflict with a renewal.
func editLease(t *testing.T, s *kubetest.Server, name string, edit func(*coordv1.LeaseSpec)) {
	t.Helper()
	leases := s.Admin.CoordinationV1().Leases(kubetest.Namespace)
	for i := 0; ; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		l, err := leases.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			edit(&l.Spec)
			_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		}
		cancel()
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) || i == 20 {
			t.Fatalf("edit Lease %s: %v", name, err)
		}
	}
}

// createLease creates the Lease name with spec as the admin.
func createLease(t *testing.T, s *kubetest.Server, name string, spec coordv1.LeaseSpec) *coordv1.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := s.Admin.CoordinationV1().Leases(kubetest.Namespace).Create(ctx, &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Lease %s: %v", name, err)
	}
	return l
}

func ptrTo[T any](v T) *T { return &v }

// TestKubeSaysWhatHappened (issues 23.4, 23.5, 26) against a real API
// server with coordinated leader election's fields served
// (--feature-gates=CoordinatedLeaderElection=true, and the LeaseCandidate
// API its controller lists):
//   - the loss of a held Lease is reported with the kind's own reason: an
//     overwrite by another holder, a leaseDurationSeconds edit, a
//     spec.strategy written (with and without preferredHolder, even naming
//     us) — the strategy's case releases the Lease to the coordinator
//     (holder "", strategy kept) once the job is stopped;
//   - a Lease whose spec.strategy is set is refused (65, naming the
//     field), also by a waiter; --take-coordinated takes it;
//   - leaseTransitions at 2147483647 is 65 saying what to do, not 70;
//   - a namespace that does not exist is 64 naming it, not 70;
//   - a Role without watch is warned about once, and the run works;
//   - a 10 KB holderIdentity is quoted truncated;
//   - the TTLs the issue names run with the default kill grace, and each
//     value a timing refusal suggests runs.
func TestKubeSaysWhatHappened(t *testing.T) {
	s := kubetest.Start(t, kubetest.FeatureGates("CoordinatedLeaderElection=true"), kubetest.RuntimeConfig("coordination.k8s.io/v1beta1=true"))
	b := build(t)
	runner := func(name string, flags ...string) []string {
		return append([]string{"kube", "run", name, "--kubeconfig", s.Kubeconfig(kubetest.Runner)}, flags...)
	}

	t.Run("loss reasons", func(t *testing.T) {
		for i, tc := range []struct {
			name     string
			edit     func(*coordv1.LeaseSpec)
			says     string
			released bool // the Lease is released to the coordinator
		}{
			{"overwrite", func(l *coordv1.LeaseSpec) { l.HolderIdentity = ptrTo("intruder") }, `rewritten by another (holder now "intruder")`, false},
			{"duration", func(l *coordv1.LeaseSpec) { l.LeaseDurationSeconds = ptrTo(int32(300)) }, "leaseDurationSeconds changed to 300", false},
			{"strategy", func(l *coordv1.LeaseSpec) { l.Strategy = ptrTo(coordv1.OldestEmulationVersion) }, `spec.strategy is "OldestEmulationVersion"`, true},
			{"strategy and preferred holder", func(l *coordv1.LeaseSpec) {
				l.Strategy, l.PreferredHolder = ptrTo(coordv1.OldestEmulationVersion), ptrTo("successor")
			}, `preferredHolder "successor"`, true},
			{"strategy naming us", func(l *coordv1.LeaseSpec) {
				l.Strategy, l.PreferredHolder = ptrTo(coordv1.OldestEmulationVersion), l.HolderIdentity
			}, "coordinated leader election", true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				name, id := fmt.Sprintf("loss-%d", i), fmt.Sprintf("lw-loss-%d", i)
				w := wrap(t, b, s, kubetest.Runner, name, []string{"--identity", id, "--kill-grace", "1s"}, nil, "sleep", "60")
				leaseHolder(t, s, name, time.Minute, func(h string) bool { return h == id })
				editLease(t, s, name, tc.edit)
				if code := w.wait(t, time.Minute); code != 76 {
					t.Fatalf("want 76, have %d:\n%s", code, w.output())
				}
				if !strings.Contains(w.output(), tc.says) {
					t.Fatalf("want the loss reason %q:\n%s", tc.says, w.output())
				}
				if strings.Contains(w.output(), "removed or revoked") {
					t.Fatalf("a generic reason instead of the kind's:\n%s", w.output())
				}
				l := getLease(t, s, name)
				switch {
				case tc.released && (holderOf(l) != "" || l.Spec.Strategy == nil):
					t.Fatalf("want the Lease released to the coordinator (holder \"\", strategy kept), have holder %q strategy %v", holderOf(l), l.Spec.Strategy)
				case !tc.released && holderOf(l) == "":
					t.Fatalf("a lost Lease that is not ours was written (released)")
				}
			})
		}
	})

	t.Run("a coordinated Lease is not taken", func(t *testing.T) {
		l := createLease(t, s, "coordinated", coordv1.LeaseSpec{HolderIdentity: ptrTo(""), LeaseDurationSeconds: ptrTo(int32(1)), Strategy: ptrTo(coordv1.OldestEmulationVersion)})
		if l.Spec.Strategy == nil {
			t.Fatal("the API server dropped spec.strategy: the CoordinatedLeaderElection gate is off")
		}
		for _, flags := range [][]string{nil, {"--wait", "30s"}} {
			ran := filepath.Join(t.TempDir(), "ran")
			code, out := lwRun(t, b.lw, time.Minute, append(runner("coordinated", flags...), "--", "touch", ran)...)
			if code != 65 || !strings.Contains(out, "spec.strategy") || !strings.Contains(out, "--take-coordinated") {
				t.Fatalf("%v: want 65 naming spec.strategy and --take-coordinated, have %d:\n%s", flags, code, out)
			}
		}
		if code, out := lwRun(t, b.lw, time.Minute, append(runner("coordinated", "--take-coordinated"), "--", "true")...); code != 0 {
			t.Fatalf("--take-coordinated: want 0, have %d:\n%s", code, out)
		}
		if l := getLease(t, s, "coordinated"); l.Spec.Strategy != nil {
			t.Fatalf("taken with --take-coordinated: want spec.strategy cleared (as client-go's elector does), have %v", *l.Spec.Strategy)
		}
	})

	t.Run("leaseTransitions at the int32 maximum", func(t *testing.T) {
		createLease(t, s, "transitions", coordv1.LeaseSpec{HolderIdentity: ptrTo(""), LeaseDurationSeconds: ptrTo(int32(1)), LeaseTransitions: ptrTo(int32(2147483647))})
		code, out := lwRun(t, b.lw, time.Minute, append(runner("transitions"), "--", "true")...)
		if code != 65 || !strings.Contains(out, "2147483647") || !strings.Contains(out, "delete the Lease") {
			t.Fatalf("want 65 saying what to do, have %d:\n%s", code, out)
		}
	})

	t.Run("a namespace that does not exist", func(t *testing.T) {
		code, out := lwRun(t, b.lw, time.Minute, "kube", "run", "x", "--kubeconfig", s.Kubeconfig(kubetest.Admin), "--namespace", "nosuch", "--", "true")
		if code != 64 || !strings.Contains(out, `namespace "nosuch"`) {
			t.Fatalf("want 64 naming the namespace, have %d:\n%s", code, out)
		}
	})

	t.Run("a Role without watch is warned about once", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "nowatch", Namespace: kubetest.Namespace},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}}}}
		if _, err := s.Admin.RbacV1().Roles(kubetest.Namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "nowatch", Namespace: kubetest.Namespace},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "nowatch"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: string(kubetest.NoGrants)}}}
		if _, err := s.Admin.RbacV1().RoleBindings(kubetest.Namespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		nogrants := s.Client(t, kubetest.NoGrants).CoordinationV1().Leases(kubetest.Namespace)
		testutil.WaitFor(t, "the Role without watch to apply", time.Minute, func() bool {
			_, err := nogrants.Get(ctx, "nowatch", metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
		code, out := lwRun(t, b.lw, time.Minute, "kube", "run", "nowatch", "--kubeconfig", s.Kubeconfig(kubetest.NoGrants), "--", "sleep", "3")
		if code != 0 || strings.Count(out, "RBAC forbids watch") != 1 {
			t.Fatalf("want 0 and one warning about watch, have %d:\n%s", code, out)
		}
	})

	t.Run("a 10 KB holder identity is quoted truncated", func(t *testing.T) {
		big := strings.Repeat("h", 10240)
		now := metav1.NewMicroTime(time.Now())
		createLease(t, s, "bigholder", coordv1.LeaseSpec{HolderIdentity: &big, LeaseDurationSeconds: ptrTo(int32(300)), RenewTime: &now, AcquireTime: &now})
		code, out := lwRun(t, b.lw, time.Minute, append(runner("bigholder"), "--", "true")...)
		if code != 75 || !strings.Contains(out, "(10240 bytes)") || len(out) > 2048 {
			t.Fatalf("want 75 with the holder truncated, have %d and %d bytes:\n%.600s", code, len(out), out)
		}
	})

	t.Run("TTLs run with the defaults; suggestions run", func(t *testing.T) {
		for i, tc := range []struct {
			flags []string
			want  int
		}{
			{[]string{"--ttl", "6s"}, 0},
			{[]string{"--ttl", "4s"}, 0},
			{[]string{"--ttl", "2s", "--kill-grace", "0s"}, 0},
			{[]string{"--ttl", "3s"}, 64},
			{[]string{"--ttl", "6s", "--kill-grace", "5s"}, 64},
			{[]string{"--kill-grace", "10s"}, 64},
		} {
			name := fmt.Sprintf("timing-%d", i)
			args := append(runner(name, tc.flags...), "--", "true")
			code, out := lwRun(t, b.lw, time.Minute, args...)
			if code != tc.want {
				t.Fatalf("%v: want %d, have %d:\n%s", tc.flags, tc.want, code, out)
			}
			if code != 64 {
				continue
			}
			fixes := testutil.Suggested(out, args)
			if len(fixes) == 0 {
				t.Fatalf("%v: a refusal without an accepted alternative:\n%s", tc.flags, out)
			}
			for _, fixed := range fixes {
				if code, out := lwRun(t, b.lw, time.Minute, fixed...); code != 0 {
					t.Fatalf("%v: the suggested %v is refused (%d):\n%s", tc.flags, fixed, code, out)
				}
			}
		}
	})
}
