package test

import (
	"fmt"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/pg/internal/pgtest"
)

// TestStorm starts rounds of wrappers at once on one NAME, each waiting
// for the lease, and checks the history: every job ran, no two overlapped,
// each job's fence is above the one before, and every fenced write went
// through. Bounded: 8 wrappers a round, 3 rounds, and a time limit.
func TestStorm(t *testing.T) {
	srv := pgtest.Start(t)
	srv.Exec(t, "create table counter (id int primary key, n bigint not null, fence numeric not null)")
	srv.Exec(t, "insert into counter values (1, 0, -1)")
	hist := tmp(t, "history")
	const wrappers, rounds = 8, 3
	deadline := time.Now().Add(pgtest.Scale(4 * time.Minute))
	started := 0
	for r := 0; r < rounds && time.Now().Before(deadline); r++ {
		var ws []*wrapper
		for i := range wrappers {
			env := jobEnv(hist, time.Duration(20+10*i)*time.Millisecond, envJobCounter+"="+srv.DSN())
			ws = append(ws, startLW(t, env, runArgs("storm", srv.DSN(), "--ttl", "10s", "--wait", "3m")...))
			started++
		}
		for _, w := range ws {
			if code := w.wait(t, time.Until(deadline)+pgtest.Scale(time.Minute)); code != 0 {
				t.Errorf("round %d: wrapper exited %d, want 0:\n%s", r, code, w.out.String())
			}
		}
	}
	var n int64
	srv.QueryRow(t, []any{&n}, "select n from counter where id = 1")
	h := readHistory(t, hist)
	h.check(t, started, n, nil)
	if code, out := holderCode(t, srv.DSN(), "storm"); code != 1 {
		t.Errorf("after every wrapper exited, holder storm: want 1 (free), have %d:\n%s", code, out)
	}
	t.Logf("%d wrappers, %d jobs, counter %d, fences %s", started, len(h.jobs), n, fenceRange(h))
}

func fenceRange(h *history) string {
	if len(h.jobs) == 0 {
		return "none"
	}
	return fmt.Sprintf("%s..%s", h.jobs[0].fence, h.jobs[len(h.jobs)-1].fence)
}
