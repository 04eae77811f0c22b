package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
)

// TestOnceRefusesRecordsItCannotHonour (issue 17): a done record whose
// exit_code is not an exit status (256 replayed as 0, -1 as 255, 300 as
// 44 before) and a running record with no lease attached (held, 75, for
// ever before: nothing expires it) are refused with 65 naming the command
// that removes them; once removed with it, the key runs again.
func TestOnceRefusesRecordsItCannotHonour(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	cli := c.Client(t)
	ran := tmp(t, "ran")
	job := []string{"sh", "-c", fmt.Sprintf("echo ran >> %s", ran)}
	for _, tc := range []struct{ key, value string }{
		{"code-256", `{"state":"done","run_id":"r1","holder":"h","host":"x","pid":1,"started":"2026-01-01T00:00:00Z","finished":"2026-01-01T00:00:01Z","exit_code":256}`},
		{"code-minus-1", `{"state":"done","run_id":"r1","holder":"h","host":"x","pid":1,"started":"2026-01-01T00:00:00Z","finished":"2026-01-01T00:00:01Z","exit_code":-1}`},
		{"code-300", `{"state":"done","run_id":"r1","holder":"h","host":"x","pid":1,"started":"2026-01-01T00:00:00Z","finished":"2026-01-01T00:00:01Z","exit_code":300}`},
		{"running-no-lease", `{"state":"running","run_id":"r1","holder":"h","host":"x","pid":1,"started":"2026-01-01T00:00:00Z"}`},
	} {
		t.Run(tc.key, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := cli.Put(ctx, "leasewrap/once/"+tc.key, tc.value); err != nil {
				t.Fatal(err)
			}
			// With --wait too: a refusal is not a conflict to wait out.
			code, out := runLW(t, nil, onceArgs(tc.key, c.Endpoints(), []string{"--wait", "3s"}, job...)...)
			t.Logf("RESULT once run over %s | exit %d | %s", tc.key, code, strings.TrimSpace(out))
			want := "leasewrap once release " + tc.key + " --run-id r1"
			if code != 65 || !strings.Contains(out, want) {
				t.Fatalf("want 65 naming %q, have %d:\n%s", want, code, out)
			}
			if _, err := os.Stat(ran); !os.IsNotExist(err) {
				t.Fatal("the job ran over a record that was refused")
			}
			if code, out := runLW(t, nil, "once", "release", tc.key, "--run-id", "r1", "--endpoints", c.Endpoints()[0]); code != 0 {
				t.Fatalf("the command the refusal names: want 0, have %d %s", code, out)
			}
			if code, out := runLW(t, nil, onceArgs(tc.key, c.Endpoints(), nil, job...)...); code != 0 {
				t.Fatalf("after the release: want the key run, 0; have %d %s", code, out)
			}
			os.Remove(ran)
		})
	}
}
