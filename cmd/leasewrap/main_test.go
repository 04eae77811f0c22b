package main

import (
	"os"
	"os/exec"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// asMainEnv makes the test binary behave as the leasewrap command, so tests
// that need real, separate leasewrap processes re-exec themselves.
const asMainEnv = "LEASEWRAP_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	testscript.Main(m, map[string]func(){
		"leasewrap": func() { os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// leasewrapCmd returns a command that runs this test binary as leasewrap
// with args: a real, separate process.
func leasewrapCmd(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	return cmd
}

// TestScripts runs the CLI end-to-end scripts in testdata/script/*.txtar.
// Each script runs in its own directory with HOME pointing into it; the
// leasewrap command there is this test binary.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("FNO_CLAIMS_ROOT", "")
			env.Setenv("ORCHESTRATECTL_HOME", "")
			env.Setenv("FNO_EVENTS_PATH", "")
			return os.MkdirAll(env.WorkDir+"/home", 0o755)
		},
	})
}
