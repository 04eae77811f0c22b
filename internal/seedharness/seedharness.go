// Package seedharness finds the Rust interop harnesses (the seeds' own
// code, built by `make harnesses`, i.e. .ci/rust-harnesses.sh) for the
// tests that run leasewrap against them. Only tests import it.
package seedharness

import (
	"os"
	"path/filepath"
	"testing"
)

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
