package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/kube/internal/kubetest"
)

// lwRun runs the built leasewrap-kube with args to completion (bounded by
// d) and returns its exit code and combined output.
func lwRun(t *testing.T, bin string, d time.Duration, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("leasewrap-kube %q still running after %v:\n%s", args, d, out.String())
	}
	if err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// lwStart starts leasewrap-kube in its own process group (a kproc, whose
// wait returns its code).
func lwStart(t *testing.T, bin string, args ...string) *kproc {
	t.Helper()
	return startProc(t, bin, nil, args...)
}

// untilStop is a job that runs until the file stop exists.
func untilStop(stop string) []string {
	return []string{"sh", "-c", `while [ ! -e "$0" ]; do sleep 0.05; done`, stop}
}

// leaseHolder polls the Lease (as the admin) until its holder satisfies
// ok, for up to d (stretched by testutil.Scale).
func leaseHolder(t *testing.T, s *kubetest.Server, name string, d time.Duration, ok func(string) bool) string {
	t.Helper()
	d = testutil.Scale(d)
	deadline := time.Now().Add(d)
	for {
		l, err := s.Admin.CoordinationV1().Leases(kubetest.Namespace).Get(context.Background(), name, metav1.GetOptions{})
		h := ""
		if err == nil && l.Spec.HolderIdentity != nil {
			h = *l.Spec.HolderIdentity
		}
		if ok(h) {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("Lease %s: holder %q (err %v) still not as wanted after %v", name, h, err, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func envOf(t *testing.T, file string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			m[k] = v
		}
	}
	return m
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestAgainstAPIServer: the kind's basic contract against a real
// kube-apiserver, as the runner (the minimal Role): acquire, run, release
// as client-go's ReleaseOnCancel; the child's environment; a live holder
// is a conflict (also for its own identity); kube holder's JSON and exit
// codes; --wait takes over on release; loss on deletion; 69 and 77 with
// nothing run.
func TestAgainstAPIServer(t *testing.T) {
	s := kubetest.Start(t)
	bin := kubetest.Build(t, "./cmd/leasewrap-kube")
	dir := t.TempDir()
	kc := s.Kubeconfig(kubetest.Runner)
	leases := s.Admin.CoordinationV1().Leases(kubetest.Namespace)
	run := func(name string, flags ...string) []string {
		return append([]string{"kube", "run", name, "--kubeconfig", kc}, flags...)
	}

	t.Run("acquire, run, release", func(t *testing.T) {
		for i, want := range []string{"0", "1"} {
			envFile := filepath.Join(dir, "env"+want)
			code, out := lwRun(t, bin, time.Minute, append(run("basic", "--"), "sh", "-c", `env > "$0"`, envFile)...)
			if code != 0 {
				t.Fatalf("run %d: want 0, have %d:\n%s", i, code, out)
			}
			env := envOf(t, envFile)
			for k, v := range map[string]string{"LEASEWRAP_KIND": "kube", "LEASEWRAP_KEY": kubetest.Namespace + "/basic", "LEASEWRAP_FENCE": want} {
				if env[k] != v {
					t.Errorf("run %d: want %s=%s, have %q", i, k, v, env[k])
				}
			}
			if v, ok := env["HTTP2_READ_IDLE_TIMEOUT_SECONDS"]; ok {
				t.Errorf("run %d: the client's HTTP/2 health setting reached the child (%q)", i, v)
			}
			if h := env["LEASEWRAP_HOLDER"]; !strings.Contains(h, "_") {
				t.Errorf("run %d: want a default identity NAME_SUFFIX, have %q", i, h)
			}
			l, err := leases.Get(context.Background(), "basic", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sp := l.Spec
			if *sp.HolderIdentity != "" || *sp.LeaseDurationSeconds != 1 || *sp.LeaseTransitions != int32(i) || !sp.AcquireTime.Time.Equal(sp.RenewTime.Time) {
				t.Fatalf("run %d: want client-go's released record with %d transitions, have holder %q, %ds, %d transitions, acquire %v renew %v",
					i, i, *sp.HolderIdentity, *sp.LeaseDurationSeconds, *sp.LeaseTransitions, sp.AcquireTime, sp.RenewTime)
			}
		}
	})

	t.Run("held: conflict, holder, wait", func(t *testing.T) {
		stop := filepath.Join(dir, "stop-held")
		first := lwStart(t, bin, append(run("held", "--identity", "first", "--"), untilStop(stop)...)...)
		leaseHolder(t, s, "held", time.Minute, func(h string) bool { return h == "first" })
		ran := filepath.Join(dir, "ran")
		for _, flags := range [][]string{nil, {"--identity", "first"}} {
			code, out := lwRun(t, bin, time.Minute, append(run("held", append(flags, "--")...), "touch", ran)...)
			if code != 75 || !strings.Contains(out, "first") {
				t.Fatalf("while held (flags %q): want 75 naming the holder, have %d:\n%s", flags, code, out)
			}
		}
		if _, err := os.Stat(ran); err == nil {
			t.Fatal("the command ran while the Lease was held")
		}
		code, out := lwRun(t, bin, time.Minute, "kube", "holder", "held", "--kubeconfig", kc)
		var h holderJSON
		if err := json.Unmarshal([]byte(out), &h); err != nil || code != 0 {
			t.Fatalf("kube holder while held: want 0 and JSON, have %d (%v):\n%s", code, err, out)
		}
		if !h.Held || !h.Exists || h.HolderIdentity != "first" || *h.LeaseDurationSeconds != 15 || h.Namespace != kubetest.Namespace || h.RenewTime == nil {
			t.Fatalf("kube holder while held: %+v", h)
		}
		waiter := lwStart(t, bin, append(run("held", "--identity", "second", "--wait", "2m", "--"), "true")...)
		time.Sleep(500 * time.Millisecond) // let it read the held Lease and start watching
		os.WriteFile(stop, nil, 0o644)
		if code := first.wait(t, time.Minute); code != 0 {
			t.Fatalf("first holder: want 0, have %d:\n%s", code, first.out.String())
		}
		if code := waiter.wait(t, time.Minute); code != 0 {
			t.Fatalf("waiter: want 0 after the release, have %d:\n%s", code, waiter.out.String())
		}
		code, out = lwRun(t, bin, time.Minute, "kube", "holder", "held", "--kubeconfig", kc)
		h = holderJSON{}
		if err := json.Unmarshal([]byte(out), &h); err != nil || code != 1 || h.Held || h.HolderIdentity != "" || *h.LeaseTransitions != 1 {
			t.Fatalf("kube holder after both released: want 1, not held, 1 transition; have %d %+v:\n%s", code, h, out)
		}
		code, out = lwRun(t, bin, time.Minute, "kube", "holder", "absent", "--kubeconfig", kc)
		if err := json.Unmarshal([]byte(out), &h); err != nil || code != 1 || h.Exists {
			t.Fatalf("kube holder of an absent Lease: want 1 and exists false, have %d:\n%s", code, out)
		}
	})

	t.Run("a label change is not loss", func(t *testing.T) {
		// Someone labels the Lease: its spec stays ours, so the watch must
		// not call it loss, and the next renewal (whose resourceVersion is
		// now stale) must read it again and go on.
		stop := filepath.Join(dir, "stop-label")
		job := lwStart(t, bin, append(run("labelled", "--identity", "keeper", "--renew-every", "1s", "--"), untilStop(stop)...)...)
		leaseHolder(t, s, "labelled", time.Minute, func(h string) bool { return h == "keeper" })
		patch := []byte(`{"metadata":{"labels":{"team":"ops"}}}`)
		if _, err := leases.Patch(context.Background(), "labelled", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		before, _ := leases.Get(context.Background(), "labelled", metav1.GetOptions{})
		deadline := time.Now().Add(testutil.Scale(time.Minute))
		for { // two renewals after the label
			l, err := leases.Get(context.Background(), "labelled", metav1.GetOptions{})
			if err == nil && l.Spec.RenewTime.Time.Sub(before.Spec.RenewTime.Time) >= 2*time.Second {
				if *l.Spec.HolderIdentity != "keeper" || l.Labels["team"] != "ops" {
					t.Fatalf("after the label: holder %q, labels %v", *l.Spec.HolderIdentity, l.Labels)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no renewal after the label change:\n%s", job.out.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
		os.WriteFile(stop, nil, 0o644)
		if code := job.wait(t, time.Minute); code != 0 {
			t.Fatalf("labelled holder: want 0, have %d:\n%s", code, job.out.String())
		}
	})

	t.Run("examples/kubernetes/fenced-write.sh", func(t *testing.T) {
		// The example's job writes a ConfigMap guarded by its fence with
		// kubectl (as the admin: the runner's Role grants only leases).
		if _, err := exec.LookPath("kubectl"); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("kubectl is not installed (.ci/run installs Debian's kubernetes-client)")
			}
			t.Skip("kubectl is not installed")
		}
		root, err := kubetest.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		script := filepath.Join(root, "..", "examples", "kubernetes", "fenced-write.sh")
		cms := s.Admin.CoreV1().ConfigMaps(kubetest.Namespace)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "report-state"}, Data: map[string]string{"fence": "-1"}}
		if _, err := cms.Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Setenv("KUBECONFIG", s.Kubeconfig(kubetest.Admin)) // the job's kubectl; leasewrap has --kubeconfig
		code, out := lwRun(t, bin, time.Minute, append(run("fenced", "--"), script, "report-state", "first")...)
		if code != 0 || !strings.Contains(out, "written under fence 0") {
			t.Fatalf("fenced write: want 0 and written under fence 0, have %d:\n%s", code, out)
		}
		got, err := cms.Get(context.Background(), "report-state", metav1.GetOptions{})
		if err != nil || got.Data["fence"] != "0" || got.Data["value"] != "first" {
			t.Fatalf("after the write: %v %v", err, got.Data)
		}
		got.Data["fence"] = "99" // a later holder wrote meanwhile
		if _, err := cms.Update(context.Background(), got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		code, out = lwRun(t, bin, time.Minute, append(run("fenced", "--"), script, "report-state", "stale")...)
		if code != 76 || !strings.Contains(out, "stale") {
			t.Fatalf("a write under a lower fence: want 76 and stale, have %d:\n%s", code, out)
		}
		if got, _ := cms.Get(context.Background(), "report-state", metav1.GetOptions{}); got.Data["value"] != "first" {
			t.Fatalf("a stale write went through: %v", got.Data)
		}
	})

	t.Run("a waiter applies client-go's observed-time rule", func(t *testing.T) {
		// A holder whose clock ran an hour ahead wrote renewTime in our
		// future: by renewTime + duration + skew it is live for an hour, so
		// a try-once run refuses; a waiter that sees the record unchanged
		// for leaseDurationSeconds (3 s) takes it, as client-go would.
		future := metav1.NewMicroTime(time.Now().Add(time.Hour))
		holder, dur, tr := "fast-clock", int32(3), int32(4)
		l := &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "observed"},
			Spec: coordv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, AcquireTime: &future, RenewTime: &future, LeaseTransitions: &tr}}
		if _, err := leases.Create(context.Background(), l, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if code, out := lwRun(t, bin, time.Minute, append(run("observed", "--"), "true")...); code != 75 {
			t.Fatalf("try-once on a record renewed in our future: want 75, have %d:\n%s", code, out)
		}
		envFile := filepath.Join(dir, "env-observed")
		code, out := lwRun(t, bin, time.Minute, append(run("observed", "--wait", "30s", "--"), "sh", "-c", `env > "$0"`, envFile)...)
		if code != 0 {
			t.Fatalf("waiter: want 0 once the record stayed unchanged for 3 s, have %d:\n%s", code, out)
		}
		if fence := envOf(t, envFile)["LEASEWRAP_FENCE"]; fence != "5" {
			t.Fatalf("LEASEWRAP_FENCE: want 5 (4 transitions + 1), have %q", fence)
		}
	})

	t.Run("--listen: readiness follows the Lease", func(t *testing.T) {
		// The Deployment example's readinessProbe: /readyz answers 200 on
		// the replica that holds the Lease and not on one that waits.
		stop := filepath.Join(dir, "stop-listen")
		holderAddr, waiterAddr := closedPort(t), closedPort(t)
		holder := lwStart(t, bin, append(run("ready", "--identity", "active", "--listen", holderAddr, "--"), untilStop(stop)...)...)
		leaseHolder(t, s, "ready", time.Minute, func(h string) bool { return h == "active" })
		waiter := lwStart(t, bin, append(run("ready", "--identity", "standby", "--wait", "2m", "--listen", waiterAddr, "--"), "true")...)
		readyz := func(addr string) int {
			code, _ := testutil.Get(addr, "/readyz")
			return code
		}
		deadline := time.Now().Add(testutil.Scale(30 * time.Second))
		for readyz(holderAddr) != 200 || readyz(waiterAddr) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("holder /readyz %d, waiter /readyz %d:\n%s\n%s", readyz(holderAddr), readyz(waiterAddr), holder.out.String(), waiter.out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		if code := readyz(waiterAddr); code == 200 {
			t.Fatalf("the waiting replica is ready (%d)", code)
		}
		os.WriteFile(stop, nil, 0o644)
		if code := holder.wait(t, time.Minute); code != 0 {
			t.Fatalf("holder: %d:\n%s", code, holder.out.String())
		}
		if code := waiter.wait(t, time.Minute); code != 0 {
			t.Fatalf("waiter: %d:\n%s", code, waiter.out.String())
		}
	})

	t.Run("deleted: loss", func(t *testing.T) {
		job := lwStart(t, bin, append(run("deleted", "--identity", "victim", "--kill-grace", "1s", "--"), "sleep", "60")...)
		leaseHolder(t, s, "deleted", time.Minute, func(h string) bool { return h == "victim" })
		if err := leases.Delete(context.Background(), "deleted", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if code := job.wait(t, time.Minute); code != 76 {
			t.Fatalf("Lease deleted under the job: want 76, have %d:\n%s", code, job.out.String())
		}
		if _, err := leases.Get(context.Background(), "deleted", metav1.GetOptions{}); err == nil {
			t.Fatal("a lost lease must not be recreated by the release")
		}
	})

	t.Run("the minimal Role allows the watch", func(t *testing.T) {
		// The holder of "held" watched its Lease by field selector as the
		// runner, whose Role grants get, create, update and watch (no list):
		// the audit log shows the watch answered 200 and no 403.
		deadline := time.Now().Add(testutil.Scale(30 * time.Second))
		for {
			watched, forbidden := auditOf(t, s.AuditLog, string(kubetest.Runner))
			if len(forbidden) > 0 {
				t.Fatalf("requests of the runner refused: %v", forbidden)
			}
			if watched["held"] {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no completed watch of Lease held by the runner in the audit log (have %v)", watched)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})

	t.Run("unreachable: 69", func(t *testing.T) {
		bad := writeKubeconfig(t, "https://"+closedPort(t), "")
		ran := filepath.Join(dir, "ran69")
		code, out := lwRun(t, bin, time.Minute, "kube", "run", "x", "--kubeconfig", bad, "--request-timeout", "2s", "--", "touch", ran)
		if code != 69 {
			t.Fatalf("closed port: want 69, have %d:\n%s", code, out)
		}
		if code, out := lwRun(t, bin, time.Minute, "kube", "holder", "x", "--kubeconfig", bad, "--request-timeout", "2s"); code != 69 {
			t.Fatalf("kube holder, closed port: want 69, have %d:\n%s", code, out)
		}
		if _, err := os.Stat(ran); err == nil {
			t.Fatal("the command ran")
		}
	})

	t.Run("refused: 77", func(t *testing.T) {
		ran := filepath.Join(dir, "ran77")
		for _, u := range []kubetest.User{kubetest.BadToken, kubetest.NoGrants} {
			code, out := lwRun(t, bin, time.Minute, "kube", "run", "x", "--kubeconfig", s.Kubeconfig(u), "--", "touch", ran)
			if code != 77 {
				t.Fatalf("%s: want 77, have %d:\n%s", u, code, out)
			}
			if code, out := lwRun(t, bin, time.Minute, "kube", "holder", "x", "--kubeconfig", s.Kubeconfig(u)); code != 77 {
				t.Fatalf("kube holder as %s: want 77, have %d:\n%s", u, code, out)
			}
		}
		if _, err := os.Stat(ran); err == nil {
			t.Fatal("the command ran")
		}
	})
}

// auditOf reads the API server's audit log: the Leases user watched with
// a 200, and the requests on leases refused to user with 403.
func auditOf(t *testing.T, path, user string) (watched map[string]bool, forbidden []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	watched = map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		var ev struct {
			Verb       string                          `json:"verb"`
			RequestURI string                          `json:"requestURI"`
			User       struct{ Username string }       `json:"user"`
			ObjectRef  struct{ Resource, Name string } `json:"objectRef"`
			Status     struct{ Code int }              `json:"responseStatus"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil || ev.User.Username != user || ev.ObjectRef.Resource != "leases" {
			continue
		}
		if ev.Status.Code == 403 {
			forbidden = append(forbidden, ev.Verb+" "+ev.RequestURI)
		}
		if ev.Verb == "watch" && ev.Status.Code == 200 {
			watched[ev.ObjectRef.Name] = true
		}
	}
	return watched, forbidden
}
