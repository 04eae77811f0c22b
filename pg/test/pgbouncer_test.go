package test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
)

// TestPgBouncerTransactionPooling runs storms through PgBouncer in
// transaction mode, with NOTIFY off (as the docs advise there) and on
// (safety must not rest on it): exclusion holds, and once every wrapper has
// exited nothing of theirs is left in the pool: no advisory lock, no
// session in a transaction, no prepared statement, no LISTEN, the lease
// free.
func TestPgBouncerTransactionPooling(t *testing.T) {
	for _, c := range []struct {
		name  string
		extra []string
	}{
		{"no-notify", []string{"--no-notify"}},
		{"notify", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := pgtest.Start(t)
			b := pgtest.StartPgBouncer(t, srv, "transaction")
			hist := tmp(t, "history")
			const wrappers, rounds = 5, 2
			deadline := time.Now().Add(pgtest.Scale(3 * time.Minute))
			started := 0
			for r := 0; r < rounds && time.Now().Before(deadline); r++ {
				var ws []*wrapper
				for range wrappers {
					args := runArgs("bouncer", b.DSN(), append([]string{"--ttl", "10s", "--wait", "3m"}, c.extra...)...)
					ws = append(ws, startLW(t, jobEnv(hist, 30*time.Millisecond), args...))
					started++
				}
				for _, w := range ws {
					if code := w.wait(t, time.Until(deadline)+pgtest.Scale(time.Minute)); code != 0 {
						t.Errorf("round %d: wrapper exited %d, want 0:\n%s", r, code, w.out.String())
					}
				}
			}
			readHistory(t, hist).check(t, started, -1, nil)
			checkNoLeftovers(t, srv, b)
			if code, out := holderCode(t, b.DSN(), "bouncer"); code != 1 {
				t.Errorf("holder bouncer through pgbouncer after every wrapper exited: want 1 (free), have %d:\n%s", code, out)
			}
		})
	}
}

// checkNoLeftovers looks at the server directly and at pooled server
// connections through pgbouncer for state the wrappers left behind.
func checkNoLeftovers(t *testing.T, srv *pgtest.Server, b *pgtest.PgBouncer) {
	t.Helper()
	var n int
	srv.QueryRow(t, []any{&n}, "select count(*) from pg_locks where locktype = 'advisory'")
	if n != 0 {
		t.Errorf("%d advisory locks left on the server", n)
	}
	for _, r := range srv.Query(t, "select pid, state, query from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid() and state <> 'idle'") {
		t.Errorf("a pooled backend is not idle: %v", r)
	}
	cfg, err := pgx.ParseConfig(b.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	// Several clients land on several pooled server connections.
	for i := range 8 {
		ctx, cancel := context.WithTimeout(context.Background(), pgtest.Scale(20*time.Second))
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		var pid, prepared, listening int
		err = conn.QueryRow(ctx, `select pg_backend_pid(), (select count(*) from pg_prepared_statements),
			(select count(*) from pg_listening_channels())`).Scan(&pid, &prepared, &listening)
		conn.Close(context.Background())
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if prepared != 0 || listening != 0 {
			t.Errorf("client %d: pooled backend %d has %d prepared statements and %d LISTEN channels left", i, pid, prepared, listening)
		}
	}
}
