// Package seedharness finds the Rust interop harnesses (the seeds' own
// code, built by `make harnesses`, i.e. .ci/rust-harnesses.sh) for the
// tests that run leasewrap against them, and runs them with bounded waits
// on internal/testutil's Proc. Only tests import it.
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

// Bin returns the harness binary: $env when set, else
// testdata/<dir>/target/debug/<name> relative to the test's package
// directory, where `make harnesses` builds it. A missing harness skips the
// test, except under CI (env CI set), where it fails: an interop test must
// not silently skip there.
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

// Run runs cmd to its end, bounded by a generous 30 s, and returns its
// trimmed standard output and exit code. cmd.Stderr defaults to the test's
// standard error.
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

// Start starts a harness command that keeps running (holding what it
// took) until its standard input closes (Proc.Stop); its output is read
// with Proc.Line. cmd.Stderr defaults to the test's standard error. It is
// killed and reaped at the test's cleanup.
func Start(t testing.TB, cmd *exec.Cmd) *testutil.Proc {
	t.Helper()
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	return testutil.StartPiped(t, cmd)
}
