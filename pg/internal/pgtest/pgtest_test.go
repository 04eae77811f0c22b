package pgtest

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

func TestServerAnswersAndChecksPasswords(t *testing.T) {
	s := Start(t)
	var enc string
	s.QueryRow(t, []any{&enc}, "show server_encoding")
	if enc != "UTF8" {
		t.Errorf("server_encoding: want UTF8, have %s", enc)
	}
	s.Exec(t, "create table t (v text)")
	s.Exec(t, "insert into t values ($1)", "x")
	if rows := s.Query(t, "select v from t"); len(rows) != 1 || rows[0][0] != "x" {
		t.Errorf("rows: want [[x]], have %v", rows)
	}
	if tl := s.Timeline(t); tl != 1 {
		t.Errorf("timeline: want 1, have %d", tl)
	}
	ctx, cancel := context.WithTimeout(context.Background(), Scale(20*time.Second))
	defer cancel()
	_, err := pgx.Connect(ctx, "postgres://postgres:wrong@"+s.Addr()+"/postgres?sslmode=disable")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "28P01" {
		t.Errorf("wrong password: want SQLSTATE 28P01, have %v", err)
	}
}

func TestBackendStopAndTerminate(t *testing.T) {
	s := Start(t)
	conn := Connect(t, s.DSN()+"&application_name=victim")
	pids := s.BackendPIDs(t, "victim")
	if len(pids) != 1 {
		t.Fatalf("backends of victim: want 1, have %v", pids)
	}
	if err := s.StopBackend(pids[0]); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err := conn.Exec(ctx, "select 1")
	cancel()
	if err == nil {
		t.Fatalf("query on a stopped backend: want a deadline error, have none")
	}
	s.ContinueBackend(pids[0])
	conn2 := Connect(t, s.DSN()+"&application_name=victim2")
	p2 := s.BackendPIDs(t, "victim2")
	if len(p2) != 1 || !s.Terminate(t, p2[0]) {
		t.Fatalf("terminate victim2 %v failed", p2)
	}
	if _, err := conn2.Exec(context.Background(), "select 1"); err == nil {
		t.Errorf("query on a terminated backend: want an error, have none")
	}
}

// The failover tests rely on this: a commit the primary acknowledged while
// the proxy to its standby was paused is gone after the standby is promoted,
// and the timeline goes from 1 to 2.
func TestPausedProxyLosesAckedCommitAcrossFailover(t *testing.T) {
	primary := Start(t)
	proxy := StartProxy(t, primary.Addr())
	standby := StartStandby(t, primary, proxy)
	primary.Exec(t, "create table t (v text)")
	primary.Exec(t, "insert into t values ('before-partition')")
	testutil.WaitFor(t, "the standby to replay before-partition", Scale(30*time.Second), func() bool {
		var n int
		return standby.TryQueryRow([]any{&n}, "select count(*) from t") == nil && n == 1
	})
	proxy.Pause()
	primary.Exec(t, "insert into t values ('acked-then-lost')")
	if err := primary.Kill(); err != nil {
		t.Fatal(err)
	}
	standby.Promote(t)
	if tl := standby.Timeline(t); tl != 2 {
		t.Errorf("timeline after promotion: want 2, have %d", tl)
	}
	rows := standby.Query(t, "select v from t order by v")
	if len(rows) != 1 || rows[0][0] != "before-partition" {
		t.Errorf("rows after failover: want [[before-partition]], have %v", rows)
	}
}

// With synchronous replication the same partition blocks the commit, and
// nothing acknowledged is lost.
func TestSyncReplicationKeepsAckedCommits(t *testing.T) {
	primary := Start(t)
	proxy := StartProxy(t, primary.Addr())
	standby := StartStandby(t, primary, proxy)
	primary.SetSync(t)
	primary.Exec(t, "create table t (v text)")
	primary.Exec(t, "insert into t values ('before-partition')")
	var n int
	standby.QueryRow(t, []any{&n}, "select count(*) from t")
	if n != 1 {
		t.Fatalf("remote_apply: the standby has %d rows right after the commit, want 1", n)
	}
	proxy.Pause()
	conn := Connect(t, primary.DSN())
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_, err := conn.Exec(ctx, "insert into t values ('not-acked')")
	cancel()
	if err == nil {
		t.Fatalf("insert through a paused sync standby: want a deadline error, have success")
	}
	primary.Kill()
	standby.Promote(t)
	rows := standby.Query(t, "select v from t order by v")
	if len(rows) != 1 || rows[0][0] != "before-partition" {
		t.Errorf("rows after failover: want [[before-partition]], have %v", rows)
	}
}

func TestProxyForwardsPausesAndAborts(t *testing.T) {
	s := Start(t)
	p := StartProxy(t, s.Addr())
	conn := Connect(t, "postgres://postgres:"+Password+"@"+p.Addr()+"/postgres?sslmode=disable")
	if _, err := conn.Exec(context.Background(), "select 1"); err != nil {
		t.Fatal(err)
	}
	p.Pause()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := conn.Exec(ctx, "select 1")
	cancel()
	if err == nil {
		t.Fatalf("query through a paused proxy: want a deadline error, have success")
	}
	p.Resume()
	conn2 := Connect(t, "postgres://postgres:"+Password+"@"+p.Addr()+"/postgres?sslmode=disable")
	p.Abort()
	if _, err := conn2.Exec(context.Background(), "select 1"); err == nil {
		t.Errorf("query after Abort: want an error, have success")
	}
}

func TestPgBouncerTransactionMode(t *testing.T) {
	s := Start(t)
	b := StartPgBouncer(t, s, "transaction")
	cfg, err := pgx.ParseConfig(b.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	ctx, cancel := context.WithTimeout(context.Background(), Scale(20*time.Second))
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var port string
	if err := conn.QueryRow(ctx, "select current_setting('port')").Scan(&port); err != nil {
		t.Fatal(err)
	}
	if port != strconv.Itoa(s.Port) {
		t.Errorf("server port through pgbouncer: want %d, have %s", s.Port, port)
	}
}
