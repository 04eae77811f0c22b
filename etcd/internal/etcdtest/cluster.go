package etcdtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// Options configure a cluster.
type Options struct {
	Members int       // default 1
	TLS     *TLSFiles // client listener over TLS
}

// Cluster is a set of member processes.
type Cluster struct {
	t       testing.TB
	Members []*Member
	tls     *TLSFiles
}

// Member is one server process.
type Member struct {
	t   testing.TB
	cfg memberConfig
	mu  sync.Mutex
	cmd *exec.Cmd
	// exited is closed when the current process has been waited for.
	exited chan struct{}
}

// Start starts a cluster and waits until every member is ready. The
// members are killed when the test ends. A member that exits before it is
// ready (a port freePort chose was taken by another test package since) is
// started again on new ports, at most three times in all.
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	var err error
	for range 3 {
		var c *Cluster
		if c, err = start(t, o); err == nil {
			return c
		}
		if !errors.Is(err, errExitedEarly) {
			break
		}
	}
	t.Fatalf("etcdtest: %v", err)
	return nil
}

// errExitedEarly: a member's process ended before it said READY.
var errExitedEarly = errors.New("exited before it was ready")

func start(t testing.TB, o Options) (*Cluster, error) {
	n := max(o.Members, 1)
	c := &Cluster{t: t, tls: o.TLS}
	scheme := "http"
	if o.TLS != nil {
		scheme = "https"
	}
	var peers []string
	for i := range n {
		cp, err1 := freePort()
		pp, err2 := freePort()
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("free ports: %v %v", err1, err2)
		}
		m := &Member{t: t, cfg: memberConfig{
			Name:         fmt.Sprintf("m%d", i),
			Dir:          filepath.Join(t.TempDir(), "etcd"),
			ClientURL:    fmt.Sprintf("%s://127.0.0.1:%d", scheme, cp),
			PeerURL:      fmt.Sprintf("http://127.0.0.1:%d", pp),
			ClusterToken: fmt.Sprintf("etcdtest-%d-%d", os.Getpid(), time.Now().UnixNano()),
			TLS:          o.TLS,
		}}
		peers = append(peers, m.cfg.Name+"="+m.cfg.PeerURL)
		c.Members = append(c.Members, m)
	}
	for _, m := range c.Members {
		m.cfg.InitialCluster = strings.Join(peers, ",")
		m.cfg.ClusterToken = c.Members[0].cfg.ClusterToken
	}
	errc := make(chan error, n)
	for _, m := range c.Members {
		go func() { errc <- m.start() }()
	}
	var err error
	for range n {
		if e := <-errc; e != nil && err == nil {
			err = e
		}
	}
	kill := func() {
		for _, m := range c.Members {
			m.Kill()
		}
	}
	if err != nil {
		kill()
		return nil, err
	}
	t.Cleanup(kill)
	return c, nil
}

// Endpoints are the members' client URLs.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.Members {
		eps = append(eps, m.Endpoint())
	}
	return eps
}

// Client returns a client of the whole cluster (closed when the test ends).
func (c *Cluster) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	cfg := clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
	if c.tls != nil {
		tc, err := c.tls.ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		cfg.TLS = tc
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		t.Fatalf("etcdtest: client: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// Leader returns the member that is leader now (asking each).
func (c *Cluster) Leader(t testing.TB) *Member {
	t.Helper()
	cli := c.Client(t)
	deadline := time.Now().Add(testutil.Scale(10 * time.Second))
	for time.Now().Before(deadline) {
		for _, m := range c.Members {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			st, err := cli.Status(ctx, m.Endpoint())
			cancel()
			if err == nil && st.Leader != 0 && st.Leader == st.Header.MemberId {
				return m
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("etcdtest: no leader in time")
	return nil
}

// Endpoint is the member's client URL.
func (m *Member) Endpoint() string { return m.cfg.ClientURL }

// PID is the current server process's pid.
func (m *Member) PID() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cmd.Process.Pid
}

func (m *Member) start() error {
	raw, _ := json.Marshal(m.cfg)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envServer+"="+string(raw))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start member %s: %w", m.cfg.Name, err)
	}
	exited := make(chan struct{})
	m.mu.Lock()
	m.cmd, m.exited = cmd, exited
	m.mu.Unlock()
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			if sc.Text() == "READY" && !ok {
				ok = true
				ready <- true
			}
		}
		if !ok {
			ready <- false
		}
		cmd.Wait()
		close(exited)
	}()
	select {
	case ok := <-ready:
		if !ok {
			return fmt.Errorf("member %s %w", m.cfg.Name, errExitedEarly)
		}
		return nil
	case <-time.After(testutil.Scale(20 * time.Second)):
		cmd.Process.Kill()
		return fmt.Errorf("member %s not ready in time", m.cfg.Name)
	}
}

// Stop pauses the member (SIGSTOP); Cont resumes it.
func (m *Member) Stop() { m.signal(syscall.SIGSTOP) }
func (m *Member) Cont() { m.signal(syscall.SIGCONT) }

func (m *Member) signal(s syscall.Signal) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil && m.cmd.Process != nil {
		m.cmd.Process.Signal(s)
	}
}

// Kill SIGKILLs the member and waits for it to be gone.
func (m *Member) Kill() {
	m.mu.Lock()
	cmd, exited := m.cmd, m.exited
	m.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGCONT)
	cmd.Process.Kill()
	select {
	case <-exited:
	case <-time.After(testutil.Scale(10 * time.Second)):
		m.t.Errorf("etcdtest: member %s not gone long after SIGKILL", m.cfg.Name)
	}
}

// Restart starts the member again, with the same data and ports, after
// Kill.
func (m *Member) Restart() {
	m.t.Helper()
	if err := m.start(); err != nil {
		m.t.Fatalf("etcdtest: restart: %v", err)
	}
}
