package supervisor

import (
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestResolveRefusesWhatExecveRefusesWithE2BIG checks Resolve's E2BIG
// verdict against a real execve of the same argv and environment: a string
// of MAX_ARG_STRLEN bytes with its NUL is run, one byte more is E2BIG; an
// argv clearly past the stack limit's share is E2BIG, half of it is run.
// Resolve refuses exactly what the kernel refuses here (with the room it
// keeps for leasewrap's variables, it also refuses up to envMargin bytes
// below the kernel's limit).
func TestResolveRefusesWhatExecveRefusesWithE2BIG(t *testing.T) {
	trueBin, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_STACK, &rl); err != nil {
		t.Fatal(err)
	}
	limit := stkLim / 4 * 3
	if rl.Cur != unix.RLIM_INFINITY {
		limit = min(limit, int(rl.Cur/4))
	}
	limit = max(limit, argMax)
	many := func(total int) []string {
		argv := []string{trueBin}
		for n := 0; n < total; n += 100_001 {
			argv = append(argv, strings.Repeat("x", 100_000))
		}
		return argv
	}
	env := []string{"PATH=/usr/bin:/bin"}
	for _, c := range []struct {
		name string
		argv []string
		fits bool
	}{
		{"one string of MAX_ARG_STRLEN with its NUL", []string{trueBin, strings.Repeat("x", maxArgStrlen-1)}, true},
		{"one string a byte longer", []string{trueBin, strings.Repeat("x", maxArgStrlen)}, false},
		{"half the stack limit's share", many(limit / 2), true},
		{"the stack limit's share and 100 kB", many(limit + 100_000), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, rerr := Resolve(c.argv, "", env)
			cmd := exec.Command(trueBin)
			cmd.Args, cmd.Env = c.argv, env
			xerr := cmd.Run()
			kernelRefused := errors.Is(xerr, syscall.E2BIG)
			if xerr != nil && !kernelRefused {
				t.Fatalf("exec: %v", xerr)
			}
			if kernelRefused == c.fits {
				t.Fatalf("the kernel's verdict is not the one this case was built for: fits=%v, exec: %v", c.fits, xerr)
			}
			var ee *ExecError
			switch {
			case c.fits && rerr != nil:
				t.Fatalf("Resolve refused what execve runs: %v", rerr)
			case !c.fits && (!errors.As(rerr, &ee) || ee.Code != CodeNotExecutable || !errors.Is(rerr, errArgTooLong)):
				t.Fatalf("want an *ExecError 126 (E2BIG) as execve gives %v, have %v", xerr, rerr)
			}
			if rerr != nil {
				t.Logf("refused: %v", rerr)
			}
		})
	}
}
