package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
)

// TestOncePublishFailureLeavesTheKeyFree (issue 17, a failed settle never
// blocks a key): when the publish fails (here the server refuses it as too
// large: --max-request-bytes set above the server's real limit, so the
// pre-run check lets it through), the run says the result may not be
// recorded (76), and its running record goes with its revoked lease: the
// key is free and the next run runs.
func TestOncePublishFailureLeavesTheKeyFree(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	ran := tmp(t, "ran")
	a := strings.Repeat("<", 100_000)
	job := []string{"sh", "-c", fmt.Sprintf("echo ran >> %s", ran), "x"}
	code, out := runLW(t, nil, onceArgs("k", c.Endpoints(), []string{"--max-request-bytes", "8000000"}, append(job, a, a, a)...)...)
	t.Logf("RESULT publish refused by the server | exit %d | %s", code, lastLineOf(out))
	if code != 76 || !strings.Contains(out, "may or may not be recorded") {
		t.Fatalf("want 76 saying the result may not be recorded, have %d:\n%.3000s", code, out)
	}
	if code, out := runLW(t, nil, "once", "lookup", "k", "--endpoints", c.Endpoints()[0]); code != 1 {
		t.Fatalf("lookup after the failed publish: want 1 (free), have %d %s", code, out)
	}
	if code, out := runLW(t, nil, onceArgs("k", c.Endpoints(), nil, job...)...); code != 0 {
		t.Fatalf("the next run: want 0, have %d %s", code, out)
	}
	if b, _ := os.ReadFile(ran); strings.Count(string(b), "ran") != 2 {
		t.Fatalf("want the job run twice (the first result was not recorded), have %q", b)
	}
}
