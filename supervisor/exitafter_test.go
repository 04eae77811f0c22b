package supervisor

import (
	"strings"
	"syscall"
	"testing"
)

// Run removes the signal handlers it installed before it returns, so a
// program that goes on afterwards gets the default actions back; with
// ExitAfter (leasewrap's main, which exits at once) they stay installed and
// a late signal is dropped instead.
func TestExitAfterLeavesSignalHandlersInstalled(t *testing.T) {
	for _, tc := range []struct {
		name, exitAfter string
		survive         bool
	}{
		{"default removes them", "0", false},
		{"ExitAfter keeps them", "1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			code, s := runSup(t, testEnv(dir, "T_EXIT_AFTER="+tc.exitAfter, "T_SIGNAL_SELF_AFTER=1"), "sh", "-c", "exit 3")
			survived := strings.Contains(s.stderrText(), "survived SIGTERM after Run")
			if survived != tc.survive {
				t.Fatalf("want survived=%v, have %v (exit %d)\nstderr:\n%s", tc.survive, survived, code, s.stderrText())
			}
			if tc.survive {
				if code != 3 {
					t.Fatalf("want the child's 3, have %d\nstderr:\n%s", code, s.stderrText())
				}
				return
			}
			ws, ok := s.cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
				t.Fatalf("want death by SIGTERM, have status %v\nstderr:\n%s", s.cmd.ProcessState, s.stderrText())
			}
		})
	}
}
