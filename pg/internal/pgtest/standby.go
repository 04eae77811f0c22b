package pgtest

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// StartStandby makes a streaming hot standby of primary with pg_basebackup
// -R, connected to primary through via (nil: directly), and waits until it
// streams.
func StartStandby(t testing.TB, primary *Server, via *Proxy) *Server {
	t.Helper()
	findBinaries(t)
	pgUser(t)
	addr := primary.Addr()
	if via != nil {
		addr = via.Addr()
	}
	host, port, _ := strings.Cut(addr, ":")
	dir := serverDir(t)
	s := &Server{Dir: dir}
	cmd := asPostgres(bin("pg_basebackup"), "-h", host, "-p", port, "-U", "postgres",
		"-D", s.DataDir(), "-R", "-X", "stream", "-c", "fast", "--no-sync")
	if out, err := runBounded(cmd, Scale(120*time.Second)); err != nil {
		t.Fatalf("pg_basebackup from %s: %v: %s", addr, err, out)
	}
	s.start(t, nil)
	testutil.WaitFor(t, "standby "+s.Addr()+" streaming from "+addr, Scale(60*time.Second), func() bool {
		var n int
		err := s.TryQueryRow([]any{&n}, "select count(*) from pg_stat_wal_receiver where status = 'streaming'")
		return err == nil && n == 1
	})
	return s
}

// Promote promotes a standby (pg_promote, waiting) and waits until it
// accepts writes.
func (s *Server) Promote(t testing.TB) {
	t.Helper()
	var ok bool
	s.QueryRow(t, []any{&ok}, "select pg_promote(true, $1)", int(Scale(60*time.Second).Seconds()))
	if !ok {
		t.Fatalf("pg_promote on %s returned false\n%s", s.Addr(), tail(s.Log(), 2000))
	}
	testutil.WaitFor(t, s.Addr()+" out of recovery", Scale(60*time.Second), func() bool {
		var rec bool
		return s.TryQueryRow([]any{&rec}, "select pg_is_in_recovery()") == nil && !rec
	})
}

// SetSync makes every commit on s wait until a standby applied it
// (synchronous_standby_names='*', synchronous_commit='remote_apply') and
// waits until a standby is synchronous. Call it after the standby streams:
// without one, every commit blocks.
func (s *Server) SetSync(t testing.TB) {
	t.Helper()
	s.Exec(t, "alter system set synchronous_standby_names = '*'")
	s.Exec(t, "alter system set synchronous_commit = 'remote_apply'")
	s.Exec(t, "select pg_reload_conf()")
	testutil.WaitFor(t, "a synchronous standby of "+s.Addr(), Scale(60*time.Second), func() bool {
		var n int
		err := s.TryQueryRow([]any{&n}, "select count(*) from pg_stat_replication where sync_state = 'sync'")
		return err == nil && n > 0
	})
}

// runBounded runs cmd and kills it after within.
func runBounded(cmd *exec.Cmd, within time.Duration) ([]byte, error) {
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	timer := time.AfterFunc(within, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	if !timer.Stop() {
		err = fmt.Errorf("killed after %v: %v", within, err)
	}
	return []byte(out.String()), err
}
