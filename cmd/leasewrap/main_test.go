package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/supervisor"
)

// asMainEnv makes the test binary behave as the leasewrap command, so tests
// that need real, separate leasewrap processes re-exec themselves.
const asMainEnv = "LEASEWRAP_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	supervisor.Gate()
	if os.Getenv(noPtraceEnv) == "1" {
		execWithoutPtrace() // waiter_hostile_test.go
	}
	if os.Getenv("CHILD_REPORT") == "1" && os.Getenv("LEASEWRAP_KIND") != "" {
		childReport()
		os.Exit(0)
	}
	if os.Getenv(asMainEnv) == "1" {
		main() // the real entry point, SIGPIPE handling included
	}
	testscript.Main(m, map[string]func(){
		"leasewrap": main,
	})
}

// leasewrapCmd returns a command that runs this test binary as leasewrap
// with args: a real, separate process. Claims' audit events go to the
// test's temporary directory, not ./.fno of the package, unless the test
// appends its own FNO_EVENTS_PATH (the last one wins).
func leasewrapCmd(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asMainEnv+"=1", "FNO_EVENTS_PATH="+filepath.Join(t.TempDir(), "events.jsonl"))
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

// childReport prints, as a child started by leasewrap, its LEASEWRAP_*
// environment and the descriptors it inherited.
func childReport() {
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LEASEWRAP_") {
			fmt.Println(kv)
		}
	}
	for _, fd := range inheritedFDs(0) {
		fmt.Println("fd", fd)
	}
}

// inheritedFDs lists this process's descriptors from min up without
// FD_CLOEXEC. Right after exec those are exactly the inherited ones (Go
// opens its own with FD_CLOEXEC); in the test process, those above 2 came
// from whatever started the test and pass to every exec.
func inheritedFDs(min int) []string {
	entries, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < min {
			continue
		}
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			out = append(out, e.Name())
		}
	}
	return out
}
