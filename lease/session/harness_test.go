package session

import (
	"os"
	"path/filepath"
	"testing"
)

// rustHarness returns the Rust interop harness binary: $env when set, else
// testdata/<dir>/target/debug/<name> as .ci/rust-harnesses.sh (make
// harnesses) builds it. A missing harness skips the test, except under CI
// (env CI set), where it fails: an interop test must not silently skip there.
func rustHarness(t *testing.T, env, dir, name string) string {
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
