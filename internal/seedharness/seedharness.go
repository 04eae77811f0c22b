// Package seedharness finds and runs, with bounded waits, the Rust interop
// harnesses `make harnesses` builds. Only tests import it.
package seedharness

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// Within bounds each wait of a test on a harness's output or exit.
const Within = 15 * time.Second

// runWithin bounds a harness command run to its end.
const runWithin = 30 * time.Second

// Bin returns the harness binary: $env, else testdata/<dir>/target/debug/<name>.
// A missing harness skips the test, but fails it under CI.
func Bin(t testing.TB, env, dir, name string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	p, err := filepath.Abs(filepath.Join("testdata", dir, "target", "debug", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		msg := "Rust harness " + p + " not built: run `make harnesses` (.ci/rust-harnesses.sh), or set " + env
		if os.Getenv("CI") != "" {
			t.Fatal(msg + " (CI is set: a missing interop harness is a failure)")
		}
		t.Skip(msg)
	}
	return p
}

// Run runs cmd to its end (bounded by 30 s) and returns its trimmed stdout
// and exit code; cmd.Stderr defaults to the test's.
func Run(t testing.TB, cmd *exec.Cmd) (string, int) {
	t.Helper()
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	err := testutil.Start(t, cmd).Wait(t, runWithin)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	return strings.TrimSpace(out.String()), code
}

// Start starts a harness that runs until its stdin closes (Proc.Stop); it is
// killed and reaped at the test's cleanup.
func Start(t testing.TB, cmd *exec.Cmd) *testutil.Proc {
	t.Helper()
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	return testutil.StartPiped(t, cmd)
}
