package kubetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// User is one of the identities Start sets up; Kubeconfig and Config give
// its credentials.
type User string

const (
	// Admin is in system:masters: everything is allowed.
	Admin User = "admin"
	// Runner is "leasewrap-runner", whose Role (RunnerRole, bound by a
	// RoleBinding of the same name) grants RunnerVerbs on leases in the
	// test namespace and nothing else.
	Runner User = "leasewrap-runner"
	// NoGrants is an authenticated user without any RBAC grant: every
	// request about leases is forbidden (403).
	NoGrants User = "nogrants"
	// BadToken presents a token the API server does not know (401).
	BadToken User = "badtoken"
)

// Users are all the users, in the order above.
var Users = []User{Admin, Runner, NoGrants, BadToken}

const (
	// Namespace is the namespace the runner's Role grants leases in; every
	// kubeconfig's context names it.
	Namespace = "leasewrap-test"
	// RunnerRole names the runner's Role and RoleBinding.
	RunnerRole = "leasewrap-runner"
)

// RunnerVerbs are the verbs the runner's Role grants on leases: the minimal
// Role docs/KUBERNETES.md documents.
var RunnerVerbs = []string{"get", "create", "update", "watch"}

// ReadyTimeout bounds the wait for /readyz after a start or restart (the
// machines that run the tests are often loaded).
const ReadyTimeout = 120 * time.Second

// Server is a running etcd and kube-apiserver pair. Its methods may be
// called from any goroutine; Pause, Resume, Restart and Stop are not meant
// to run concurrently with each other.
type Server struct {
	// URL is the API server's address, https://127.0.0.1:PORT.
	URL string
	// Dir holds the certificates, tokens, kubeconfigs, logs and etcd's data.
	Dir string
	// CA is the PEM file of the CA that signed the serving certificate.
	CA string
	// AuditLog is the API server's audit log (JSON lines, one per
	// completed request on leases and configmaps, level Metadata).
	AuditLog string
	// Etcd and APIServer are the two processes. Tests pause, resume and
	// read the logs of APIServer through Server's methods or directly.
	Etcd, APIServer *Process
	// Admin is a clientset with the admin's credentials.
	Admin *kubernetes.Clientset

	t           testing.TB
	tokens      map[User]string
	kubeconfigs map[User]string
	extraArgs   []string // the Options' API server flags
}

// Option changes how Start starts the API server.
type Option func(*Server)

// FeatureGates starts the API server with --feature-gates=gates, for
// example "CoordinatedLeaderElection=true" (a Lease's spec.strategy and
// spec.preferredHolder are dropped without it).
func FeatureGates(gates string) Option {
	return func(s *Server) { s.extraArgs = append(s.extraArgs, "--feature-gates="+gates) }
}

// RuntimeConfig starts the API server with --runtime-config=apis, for
// example "coordination.k8s.io/v1beta1=true" (the LeaseCandidate API,
// which the CoordinatedLeaderElection gate's controller lists: without
// it the server never turns ready).
func RuntimeConfig(apis string) Option {
	return func(s *Server) { s.extraArgs = append(s.extraArgs, "--runtime-config="+apis) }
}

// Start starts etcd and kube-apiserver (changed by opts), waits until the API server is
// ready, creates Namespace with the runner's Role and RoleBinding, and
// stops both processes when the test ends. It skips the test when a
// prerequisite is missing and cannot be had, except under CI=true, where
// it fails (see the package doc).
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	etcdBin, err := exec.LookPath("etcd")
	if err != nil {
		unavailable(t, "etcd is not installed")
	}
	apiBin, err := APIServer()
	if err != nil {
		unavailable(t, "no kube-apiserver: %v", err)
	}
	s := &Server{t: t, Dir: t.TempDir(), tokens: map[User]string{}, kubeconfigs: map[User]string{}}
	for _, o := range opts {
		o(s)
	}
	t.Cleanup(s.Stop)
	if err := s.setUp(etcdBin, apiBin); err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	return s
}

func (s *Server) setUp(etcdBin, apiBin string) error {
	p, err := writePKI(s.Dir)
	if err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	s.CA = p.CA
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	s.URL = fmt.Sprintf("https://127.0.0.1:%d", ports[2])
	s.Etcd = &Process{name: "etcd", path: etcdBin, log: filepath.Join(s.Dir, "etcd.log"), args: []string{
		"--name", "kubetest", "--data-dir", filepath.Join(s.Dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "kubetest=" + peerURL,
	}}
	if err := s.Etcd.start(); err != nil {
		return err
	}
	if err := waitHTTP(etcdURL+"/health", s.Etcd, 30*time.Second); err != nil {
		return fmt.Errorf("etcd at %s: %w\n%s", etcdURL, err, tail(s.Etcd.log, 20))
	}

	var csv strings.Builder
	for _, u := range Users {
		b := make([]byte, 16)
		rand.Read(b)
		s.tokens[u] = hex.EncodeToString(b)
		switch u {
		case Admin:
			fmt.Fprintf(&csv, "%s,%s,uid-%s,\"system:masters\"\n", s.tokens[u], u, u)
		case BadToken: // not in the file: 401
		default:
			fmt.Fprintf(&csv, "%s,%s,uid-%s\n", s.tokens[u], u, u)
		}
	}
	tokens := filepath.Join(s.Dir, "tokens.csv")
	policy := filepath.Join(s.Dir, "audit-policy.yaml")
	s.AuditLog = filepath.Join(s.Dir, "audit.log")
	if err := os.WriteFile(tokens, []byte(csv.String()), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return err
	}
	s.APIServer = &Process{name: "kube-apiserver", path: apiBin, log: filepath.Join(s.Dir, "apiserver.log"), args: []string{
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--secure-port", fmt.Sprint(ports[2]),
		"--endpoint-reconciler-type", "none",
		"--cert-dir", filepath.Join(s.Dir, "certs"),
		"--tls-cert-file", p.Cert, "--tls-private-key-file", p.Key,
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", p.SAPub, "--service-account-signing-key-file", p.SAKey,
		"--token-auth-file", tokens, "--authorization-mode", "RBAC",
		"--service-cluster-ip-range", "10.0.0.0/24",
		"--audit-policy-file", policy, "--audit-log-path", s.AuditLog, "--audit-log-format", "json",
		"--profiling=false",
	}}
	s.APIServer.args = append(s.APIServer.args, s.extraArgs...)
	for _, u := range Users {
		path := filepath.Join(s.Dir, "kubeconfig-"+string(u))
		if err := writeKubeconfig(path, s.URL, s.CA, s.tokens[u]); err != nil {
			return err
		}
		s.kubeconfigs[u] = path
	}
	s.Admin, err = kubernetes.NewForConfig(s.Config(Admin))
	if err != nil {
		return err
	}
	if err := s.APIServer.start(); err != nil {
		return err
	}
	if err := s.WaitReady(ReadyTimeout); err != nil {
		return err
	}
	return s.createRBAC()
}

// auditPolicy logs every completed request on leases and configmaps, with
// its user and verb (no bodies), and nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  resources:
  - group: coordination.k8s.io
    resources: ["leases"]
  - group: ""
    resources: ["configmaps"]
- level: None
`

// Config is a client configuration with u's credentials. Its rate limit is
// raised (QPS 100) so tests are not throttled by client-go.
func (s *Server) Config(u User) *rest.Config {
	return &rest.Config{
		Host:            s.URL,
		BearerToken:     s.tokens[u],
		TLSClientConfig: rest.TLSClientConfig{CAFile: s.CA},
		QPS:             100,
		Burst:           200,
		Timeout:         10 * time.Second,
	}
}

// Client is a clientset with u's credentials.
func (s *Server) Client(t testing.TB, u User) *kubernetes.Clientset {
	t.Helper()
	c, err := kubernetes.NewForConfig(s.Config(u))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Kubeconfig is the path of u's kubeconfig: one cluster (URL, CA), one
// user (a bearer token), one context, current, whose namespace is
// Namespace.
func (s *Server) Kubeconfig(u User) string { return s.kubeconfigs[u] }

// Token is u's bearer token.
func (s *Server) Token(u User) string { return s.tokens[u] }

// WaitReady waits up to d (stretched by testutil.Scale) for the API
// server's /readyz to answer 200.
func (s *Server) WaitReady(d time.Duration) error {
	deadline := time.Now().Add(testutil.Scale(d))
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-s.APIServer.Exited():
			return fmt.Errorf("kube-apiserver %w; its log:\n%s", errExited, tail(s.APIServer.log, 40))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		var code int
		res := s.Admin.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&code)
		cancel()
		if last = res.Error(); last == nil && code == http.StatusOK {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("kube-apiserver at %s not ready within %v (last: %v); its log:\n%s", s.URL, d, last, tail(s.APIServer.log, 40))
}

// Pause stops the API server (SIGSTOP): connections stay open, nothing
// answers. etcd keeps running.
func (s *Server) Pause() { s.APIServer.Pause() }

// Resume continues a paused API server (SIGCONT).
func (s *Server) Resume() { s.APIServer.Resume() }

// Restart kills the API server (SIGKILL), starts it again on the same
// port with the same etcd and waits until it is ready. It returns how
// long the API server was gone.
func (s *Server) Restart(t testing.TB) time.Duration {
	t.Helper()
	start := time.Now()
	if err := s.APIServer.kill(); err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	if err := s.APIServer.start(); err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	if err := s.WaitReady(ReadyTimeout); err != nil {
		t.Fatalf("kubetest: restart: %v", err)
	}
	return time.Since(start)
}

// Stop kills both processes and waits for them (Start registers it with
// t.Cleanup; calling it again is harmless). When the test failed it logs
// the end of the API server's log.
func (s *Server) Stop() {
	if s.t.Failed() && s.APIServer != nil {
		s.t.Logf("kubetest: end of %s:\n%s", s.APIServer.log, tail(s.APIServer.log, 30))
	}
	for _, p := range []*Process{s.APIServer, s.Etcd} {
		if p == nil {
			continue
		}
		if err := p.kill(); err != nil {
			s.t.Errorf("kubetest: %v", err)
		}
	}
}

// waitHTTP polls url until it answers 200, the process ends, or d passes.
func waitHTTP(url string, p *Process, d time.Duration) error {
	c := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(testutil.Scale(d))
	for time.Now().Before(deadline) {
		select {
		case <-p.Exited():
			return errExited
		default:
		}
		if resp, err := c.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no answer 200 from %s within %v", url, d)
}

// tail is the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return lastLines(string(b), n)
}
