// Package pgtest starts throwaway PostgreSQL servers, streaming standbys,
// a pausable TCP proxy and PgBouncer for the pg kind's tests. Servers run as
// the postgres user (initdb and postgres refuse root), listen on 127.0.0.1
// only, and stop with the test that started them.
package pgtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Password is the password of user postgres over TCP (scram-sha-256).
// The unix socket and replication from 127.0.0.1 are trusted.
const Password = "leasewrap-test-pw"

// templateVersion names the cached template cluster; bump it when the
// template's configuration changes.
const templateVersion = "v1"

// Option changes how Start configures a server.
type Option func(*config)

type config struct {
	settings []string
}

// Setting passes "-c name=value" to the server, e.g.
// Setting("shared_preload_libraries", "pg_stat_statements").
func Setting(name, value string) Option {
	return func(c *config) { c.settings = append(c.settings, name+"="+value) }
}

// Server is one running postgres postmaster, a child of the test process.
type Server struct {
	Dir  string // the server's directory: data/, sock/, log
	Port int

	cmd     *exec.Cmd
	exited  chan struct{}
	mu      sync.Mutex
	stopped map[int]bool // backends StopBackend sent SIGSTOP
}

// Start starts a server copied from a template cluster made once per
// machine (initdb is the slow part). Missing binaries skip the test, or fail
// it under CI=true.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var c config
	for _, o := range opts {
		o(&c)
	}
	tmpl := template(t)
	dir := serverDir(t)
	if out, err := exec.Command("cp", "-a", tmpl, filepath.Join(dir, "data")).CombinedOutput(); err != nil {
		t.Fatalf("copy template cluster %s: %v: %s", tmpl, err, out)
	}
	s := &Server{Dir: dir}
	s.start(t, c.settings)
	return s
}

// DSN is a URL for user postgres with its password over TCP.
func (s *Server) DSN() string {
	return fmt.Sprintf("postgres://postgres:%s@%s/postgres?sslmode=disable", Password, s.Addr())
}

// Addr is host:port of the server on 127.0.0.1.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// SocketDir is the directory of the server's unix socket (trust auth).
func (s *Server) SocketDir() string { return filepath.Join(s.Dir, "sock") }

// DataDir is the cluster's data directory.
func (s *Server) DataDir() string { return filepath.Join(s.Dir, "data") }

// Log returns the server's log so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "log"))
	return string(b)
}

// PID is the postmaster's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Kill shuts the server down at once (SIGQUIT: immediate shutdown, no
// checkpoint, as a crash) and waits for the postmaster to exit.
func (s *Server) Kill() error { return s.shutdown(syscall.SIGQUIT) }

// Stop shuts the server down cleanly (SIGINT: fast shutdown).
func (s *Server) Stop() error { return s.shutdown(syscall.SIGINT) }

// Pause stops the postmaster (SIGSTOP): existing sessions keep working,
// new connections hang.
func (s *Server) Pause() error { return s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused postmaster.
func (s *Server) Resume() error { return s.cmd.Process.Signal(syscall.SIGCONT) }

// StopBackend sends SIGSTOP to one backend; its client's queries hang.
// The test's cleanup continues it.
func (s *Server) StopBackend(pid int) error {
	s.mu.Lock()
	s.stopped[pid] = true
	s.mu.Unlock()
	return syscall.Kill(pid, syscall.SIGSTOP)
}

// ContinueBackend sends SIGCONT to a backend StopBackend stopped.
func (s *Server) ContinueBackend(pid int) error {
	s.mu.Lock()
	delete(s.stopped, pid)
	s.mu.Unlock()
	return syscall.Kill(pid, syscall.SIGCONT)
}

// Exited is closed when the postmaster has exited and been reaped.
func (s *Server) Exited() <-chan struct{} { return s.exited }

func (s *Server) shutdown(sig syscall.Signal) error {
	select {
	case <-s.exited:
		return nil
	default:
	}
	// A stopped postmaster or backend would never act on the signal.
	s.cmd.Process.Signal(syscall.SIGCONT)
	s.mu.Lock()
	for pid := range s.stopped {
		syscall.Kill(pid, syscall.SIGCONT)
	}
	s.stopped = map[int]bool{}
	s.mu.Unlock()
	if err := s.cmd.Process.Signal(sig); err != nil {
		return err
	}
	select {
	case <-s.exited:
		return nil
	case <-time.After(Scale(30 * time.Second)):
		s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("postgres in %s did not stop within %v after %v: killed", s.Dir, Scale(30*time.Second), sig)
	}
}

// start runs postgres on a free port and waits until it accepts
// connections; a port taken meanwhile is retried on another.
func (s *Server) start(t testing.TB, settings []string) {
	t.Helper()
	var lastErr error
	for range 3 {
		s.Port = freePort(t)
		if lastErr = s.run(settings); lastErr == nil {
			t.Cleanup(func() {
				if err := s.Kill(); err != nil {
					t.Errorf("stop server: %v", err)
				}
			})
			return
		}
		if !strings.Contains(s.Log(), "could not bind") {
			break
		}
	}
	t.Fatalf("start postgres in %s: %v\n%s", s.Dir, lastErr, tail(s.Log(), 3000))
}

func (s *Server) run(settings []string) error {
	args := []string{"-D", s.DataDir(), "-p", strconv.Itoa(s.Port), "-k", s.SocketDir(),
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"}
	for _, kv := range settings {
		args = append(args, "-c", kv)
	}
	logf, err := os.OpenFile(filepath.Join(s.Dir, "log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := asPostgres(bin("postgres"), args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd, s.exited, s.stopped = cmd, make(chan struct{}), map[int]bool{}
	go func() { cmd.Wait(); close(s.exited) }()
	return s.waitReady()
}

// waitReady waits for postmaster.pid to say "ready" or "standby", as
// pg_ctl -w does.
func (s *Server) waitReady() error {
	deadline := time.Now().Add(Scale(60 * time.Second))
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("postgres exited: %v", s.cmd.ProcessState)
		case <-time.After(20 * time.Millisecond):
		}
		b, err := os.ReadFile(filepath.Join(s.DataDir(), "postmaster.pid"))
		if err != nil {
			continue
		}
		lines := strings.Split(string(b), "\n")
		if len(lines) > 7 {
			st := strings.TrimSpace(lines[7])
			if st == "ready" || st == "standby" {
				return nil
			}
		}
	}
	s.cmd.Process.Signal(syscall.SIGQUIT)
	<-s.exited
	return errors.New("postgres not ready within " + Scale(60*time.Second).String())
}

// Scale stretches a deadline for a slow machine: LEASEWRAP_TEST_SCALE
// multiplies it (default 1).
func Scale(d time.Duration) time.Duration {
	if f, err := strconv.ParseFloat(os.Getenv("LEASEWRAP_TEST_SCALE"), 64); err == nil && f > 0 {
		return time.Duration(float64(d) * f)
	}
	return d
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// serverDir makes a directory the postgres user owns inside t.TempDir,
// whose parent t.TempDir creates 0700 root.
func serverDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	uid, gid := pgUser(t)
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sock"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, "sock")} {
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// bin is the path of a PostgreSQL server binary.
func bin(name string) string { return filepath.Join(binDir, name) }

// findBinaries locates initdb and postgres: pg_config --bindir, else
// Debian's /usr/lib/postgresql/15/bin.
func findBinaries(t testing.TB) {
	t.Helper()
	binOnce.Do(func() {
		if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
			binDir = strings.TrimSpace(string(out))
		}
		if _, err := os.Stat(filepath.Join(binDir, "initdb")); binDir == "" || err != nil {
			binDir = "/usr/lib/postgresql/15/bin"
		}
		if _, err := os.Stat(filepath.Join(binDir, "postgres")); err != nil {
			binErr = fmt.Errorf("no PostgreSQL server binaries (pg_config --bindir, /usr/lib/postgresql/15/bin): install them with `apt-get install postgresql-15 pgbouncer`")
		}
	})
	if binErr != nil {
		missing(t, binErr)
	}
}

// missing skips the test for a missing tool, or fails it under CI=true,
// where a skipped interop test would pass silently.
func missing(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(err)
	}
	t.Skip(err)
}

var (
	userOnce     sync.Once
	uidPG, gidPG int
	userErr      error
)

// pgUser is the uid and gid of the postgres user.
func pgUser(t testing.TB) (int, int) {
	t.Helper()
	userOnce.Do(func() {
		u, err := user.Lookup("postgres")
		if err != nil {
			userErr = fmt.Errorf("no postgres user (%v): install postgresql-15, which creates it", err)
			return
		}
		uidPG, _ = strconv.Atoi(u.Uid)
		gidPG, _ = strconv.Atoi(u.Gid)
	})
	if userErr != nil {
		missing(t, userErr)
	}
	return uidPG, gidPG
}

// asPostgres is a command that runs as the postgres user when the test runs
// as root, from "/" (a cwd postgres cannot read draws warnings).
func asPostgres(path string, args ...string) *exec.Cmd {
	cmd := exec.Command(path, args...)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8", "TZ=UTC"}
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uidPG), Gid: uint32(gidPG)}
	}
	return cmd
}

var (
	tmplOnce sync.Once
	tmplDir  string
	tmplErr  error
)

// template returns a cluster made by initdb, cached in the temp directory
// across test binaries: made once under a private name, then renamed.
func template(t testing.TB) string {
	t.Helper()
	findBinaries(t)
	uid, gid := pgUser(t)
	tmplOnce.Do(func() { tmplDir, tmplErr = makeTemplate(uid, gid) })
	if tmplErr != nil {
		t.Fatal(tmplErr)
	}
	return tmplDir
}

func makeTemplate(uid, gid int) (string, error) {
	out, _ := exec.Command(bin("postgres"), "--version").Output()
	ver := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r == '.' {
			return r
		}
		return -1
	}, strings.Fields(string(out) + " x x")[2])
	final := filepath.Join(os.TempDir(), fmt.Sprintf("leasewrap-pgtest-%s-%s-%d", templateVersion, ver, uid))
	if _, err := os.Stat(filepath.Join(final, "PG_VERSION")); err == nil {
		return final, nil
	}
	work, err := os.MkdirTemp(os.TempDir(), "leasewrap-pgtest-initdb-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	if err := os.Chmod(work, 0o711); err != nil {
		return "", err
	}
	pw := filepath.Join(work, "pw")
	if err := os.WriteFile(pw, []byte(Password+"\n"), 0o644); err != nil {
		return "", err
	}
	data := filepath.Join(work, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		return "", err
	}
	if err := os.Chown(data, uid, gid); err != nil {
		return "", err
	}
	cmd := asPostgres(bin("initdb"), "-D", data, "-U", "postgres", "--pwfile", pw,
		"--auth-local=trust", "--auth-host=scram-sha-256",
		"-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("initdb %s: %v: %s", data, err, out)
	}
	hba := "local all all trust\n" +
		"host replication all 127.0.0.1/32 trust\n" +
		"host all all 127.0.0.1/32 scram-sha-256\n"
	if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		return "", err
	}
	conf := "\n# leasewrap pgtest\nshared_buffers = 16MB\nmax_connections = 60\n" +
		"log_line_prefix = '%m [%p] %a '\nwal_keep_size = 64MB\n"
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(conf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	if err := os.Chown(filepath.Join(data, "pg_hba.conf"), uid, gid); err != nil {
		return "", err
	}
	if err := os.Rename(data, final); err != nil {
		if _, serr := os.Stat(filepath.Join(final, "PG_VERSION")); serr == nil {
			return final, nil // another test binary made it first
		}
		return "", fmt.Errorf("keep template cluster %s: %v", final, err)
	}
	return final, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
