package claim

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProbeTakesTurns: two processes attempt one free claim. The first
// Probes (the claim looks free) and holds its attempt open; the second's
// Probe waits for the first's AcquireAnchored instead of also finding the
// claim free, then reports it held. So waiters woken by one release start
// one exec gate between them.
func TestProbeTakesTurns(t *testing.T) {
	root := t.TempDir()
	goFile := filepath.Join(t.TempDir(), "go")
	if err := os.WriteFile(goFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	start := func(holder string) (*exec.Cmd, *strings.Builder) {
		var out strings.Builder
		cmd := exec.Command(os.Args[0], "-test.run=^$", goFile, "probe-then-acquire", root, holder)
		cmd.Env = append(os.Environ(), helperEnv+"=1")
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, &out
	}
	waitFile := func(p string) {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
			if _, err := os.Stat(p); err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never appeared", p)
			}
		}
	}
	first, firstOut := start("first")
	waitFile(filepath.Join(root, "probed-first"))
	second, secondOut := start("second")
	exited := make(chan error, 1)
	go func() { exited <- second.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("the second attempt ended while the first held its turn (%v): %s", err, secondOut)
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := os.Stat(filepath.Join(root, "probed-second")); err == nil {
		t.Fatal("the second Probe found the claim free while the first attempt was open")
	}
	if err := os.WriteFile(filepath.Join(root, "go-acquire"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first: %v: %s", err, firstOut)
	}
	if err := <-exited; err != nil {
		t.Fatalf("second: %v: %s", err, secondOut)
	}
	var a, b helperOut
	json.Unmarshal([]byte(firstOut.String()), &a)
	json.Unmarshal([]byte(secondOut.String()), &b)
	if a.Outcome != "acquired" || b.Outcome != "held" || b.Holder != "first" {
		t.Fatalf("want first acquired and second held by first, have %+v and %+v", a, b)
	}
	if _, err := os.Stat(filepath.Join(root, "probed-second")); err == nil {
		t.Fatal("the second Probe found the claim free: it would have started a gate for nothing")
	}
}
