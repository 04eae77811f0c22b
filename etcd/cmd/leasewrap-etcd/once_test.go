package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
)

func onceArgs(key string, eps []string, extra []string, cmd ...string) []string {
	a := []string{"once", "run", key, "--endpoints", strings.Join(eps, ",")}
	a = append(a, extra...)
	return append(append(a, "--"), cmd...)
}

func TestOnceRacersRunOnce(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	runs := tmp(t, "runs")
	var ws []*wrapper
	for range 16 {
		ws = append(ws, startLW(t, nil, onceArgs("deploy/42", c.Endpoints(), []string{"--wait", "1m"},
			"sh", "-c", fmt.Sprintf("echo $LEASEWRAP_RUN_ID >> %s; sleep 0.3", runs))...))
	}
	for _, w := range ws {
		if code := w.wait(t, 60*time.Second); code != 0 {
			t.Fatalf("racer exit %d:\n%s", code, w.out.String())
		}
	}
	if lines := strings.Fields(waitFile(t, runs, time.Second)); len(lines) != 1 {
		t.Fatalf("want the command run once, have %d runs", len(lines))
	}
	// lookup shows the published record; release removes only that run's.
	code, out := runLW(t, nil, "once", "lookup", "deploy/42", "--endpoints", c.Endpoints()[0])
	if code != 0 || !strings.Contains(out, `"state": "done"`) || !strings.Contains(out, "leasewrap/once/deploy%2F42") {
		t.Fatalf("lookup: %d %s", code, out)
	}
	if code, out := runLW(t, nil, "once", "release", "deploy/42", "--run-id", "someone-else", "--endpoints", c.Endpoints()[0]); code != 1 {
		t.Fatalf("release of another run's record: want 1, have %d %s", code, out)
	}
	runID := strings.TrimSpace(waitFile(t, runs, time.Second))
	if code, out := runLW(t, nil, "once", "release", "deploy/42", "--run-id", runID, "--endpoints", c.Endpoints()[0]); code != 0 {
		t.Fatalf("release: want 0, have %d %s", code, out)
	}
	if code, _ := runLW(t, nil, "once", "lookup", "deploy/42", "--endpoints", c.Endpoints()[0]); code != 1 {
		t.Fatalf("lookup after release: want 1 (free), have %d", code)
	}
}

func TestOnceReplayAndFailures(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	marker := tmp(t, "ran")
	job := []string{"sh", "-c", fmt.Sprintf("echo x >> %s; exit 3", marker)}
	// A failure is not published: the retry runs again.
	for i := range 2 {
		if code, out := runLW(t, nil, onceArgs("k", c.Endpoints(), nil, job...)...); code != 3 {
			t.Fatalf("run %d: want 3, have %d %s", i, code, out)
		}
	}
	// --publish-failures publishes it; later runs replay 3 without running.
	runLW(t, nil, onceArgs("k", c.Endpoints(), []string{"--publish-failures"}, job...)...)
	if code, out := runLW(t, nil, onceArgs("k", c.Endpoints(), nil, job...)...); code != 3 {
		t.Fatalf("replay: want 3, have %d %s", code, out)
	}
	b, _ := os.ReadFile(marker)
	if n := strings.Count(string(b), "x"); n != 3 {
		t.Fatalf("want 3 runs (2 unpublished failures, 1 published), have %d", n)
	}
}
