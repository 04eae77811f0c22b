package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/etcd/internal/etcdtest"
	"github.com/leasewrap/leasewrap/internal/testutil"
)

// TestEtcdAdminVerbsOnAClosedStdout (issue 17): `once lookup`, `once
// release` and `lock holders` whose answer cannot be written (`… | true`)
// exit 2, the admin contract's error, naming standard output; before: 70.
func TestEtcdAdminVerbsOnAClosedStdout(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	ep := c.Endpoints()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := `{"state":"done","run_id":"r1","holder":"h","host":"x","pid":1,"started":"2026-01-01T00:00:00Z","finished":"2026-01-01T00:00:01Z","exit_code":0}`
	for _, k := range []string{"leasewrap/once/a", "leasewrap/once/b"} {
		if _, err := c.Client(t).Put(ctx, k, done); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range [][]string{
		{"once", "lookup", "a", "--endpoints", ep},
		{"once", "release", "b", "--run-id", "r1", "--endpoints", ep},
		{"lock", "holders", "some-lock", "--endpoints", ep},
	} {
		name := strings.Join(v[:2], " ")
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		cmd := exec.Command(os.Args[0], v...)
		cmd.Env = append(os.Environ(), envMain+"=1")
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = w, &stderr
		timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
		err = cmd.Run()
		timer.Stop()
		w.Close()
		code := testutil.ExitCode(cmd.ProcessState)
		t.Logf("RESULT %s on a closed stdout | exit %d | %s", name, code, strings.TrimSpace(stderr.String()))
		if code != 2 || !strings.Contains(stderr.String(), "standard output") {
			t.Errorf("%s: want 2 naming standard output, have %d (%v): %s", name, code, err, &stderr)
		}
	}
}
