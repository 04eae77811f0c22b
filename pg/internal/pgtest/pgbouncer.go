package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PgBouncer is a pgbouncer in front of one Server, a child of the test.
type PgBouncer struct {
	Dir  string
	Port int

	cmd    *exec.Cmd
	exited chan struct{}
}

// StartPgBouncer starts pgbouncer on a free port of 127.0.0.1 in front of
// srv with pool_mode poolMode ("transaction", "session", "statement").
// Clients log in as postgres with Password (scram-sha-256); pgbouncer
// reaches the server over its unix socket.
func StartPgBouncer(t testing.TB, srv *Server, poolMode string) *PgBouncer {
	t.Helper()
	path, err := exec.LookPath("pgbouncer")
	if err != nil {
		missing(t, fmt.Errorf("no pgbouncer: install it with `apt-get install pgbouncer`"))
	}
	uid, gid := pgUser(t)
	dir := serverDir(t)
	b := &PgBouncer{Dir: dir}
	for range 3 {
		b.Port = freePort(t)
		ini := fmt.Sprintf(`[databases]
postgres = host=%s port=%d dbname=postgres user=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = scram-sha-256
auth_file = %s
pool_mode = %s
default_pool_size = 4
max_client_conn = 100
ignore_startup_parameters = extra_float_digits,options
server_reset_query = DISCARD ALL
logfile = %s
`, srv.SocketDir(), srv.Port, b.Port, filepath.Join(dir, "userlist.txt"), poolMode, filepath.Join(dir, "pgbouncer.log"))
		files := map[string]string{
			"pgbouncer.ini": ini,
			"userlist.txt":  fmt.Sprintf("%q %q\n", "postgres", Password),
		}
		for name, body := range files {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(p, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
		cmd := asPostgres(path, filepath.Join(dir, "pgbouncer.ini"))
		if err := cmd.Start(); err != nil {
			t.Fatalf("start pgbouncer: %v", err)
		}
		b.cmd, b.exited = cmd, make(chan struct{})
		go func() { cmd.Wait(); close(b.exited) }()
		if err := b.waitReady(); err == nil {
			t.Cleanup(func() { b.Stop() })
			return b
		}
		b.Stop()
	}
	log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
	t.Fatalf("pgbouncer in %s did not start:\n%s", dir, tail(string(log), 3000))
	return nil
}

// DSN is a URL for user postgres through pgbouncer.
func (b *PgBouncer) DSN() string {
	return fmt.Sprintf("postgres://postgres:%s@%s/postgres?sslmode=disable", Password, b.Addr())
}

// Addr is pgbouncer's host:port on 127.0.0.1.
func (b *PgBouncer) Addr() string { return "127.0.0.1:" + strconv.Itoa(b.Port) }

// Stop ends pgbouncer (SIGINT: at once) and reaps it.
func (b *PgBouncer) Stop() {
	select {
	case <-b.exited:
		return
	default:
	}
	b.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-b.exited:
	case <-time.After(Scale(10 * time.Second)):
		b.cmd.Process.Kill()
		<-b.exited
	}
}

// waitReady waits until a query goes through pgbouncer.
func (b *PgBouncer) waitReady() error {
	deadline := time.Now().Add(Scale(30 * time.Second))
	var err error
	for time.Now().Before(deadline) {
		select {
		case <-b.exited:
			return fmt.Errorf("pgbouncer exited: %v", b.cmd.ProcessState)
		case <-time.After(20 * time.Millisecond):
		}
		cfg, perr := pgx.ParseConfig(b.DSN())
		if perr != nil {
			return perr
		}
		cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
		ctx, cancel := context.WithTimeout(context.Background(), Scale(5*time.Second))
		var conn *pgx.Conn
		if conn, err = pgx.ConnectConfig(ctx, cfg); err == nil {
			_, err = conn.Exec(ctx, "select 1")
			conn.Close(context.Background())
		}
		cancel()
		if err == nil {
			return nil
		}
	}
	return fmt.Errorf("pgbouncer not ready: %v", err)
}
