package supervisor

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestResolve checks each case against env(1) run for real in the same
// directory with the same PATH: Resolve's verdict must be the code env
// exits with (0 when it runs the command, whose scripts here exit 0).
func TestResolve(t *testing.T) {
	envBin, err := exec.LookPath("env")
	if err != nil {
		t.Fatal("env(1) not found; coreutils is a prerequisite")
	}
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	trueBin, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	write("script.sh", "#!/bin/sh\nexit 0\n", 0o755)
	write("shebang-spaces.sh", "#!  /bin/sh  -e\nexit 0\n", 0o755)
	write("noshebang.sh", "exit 0\n", 0o755)
	write("empty", "", 0o755)
	write("nointerp.sh", "#!/no/such/interpreter\nexit 0\n", 0o755)
	write("interpdir.sh", "#!"+dir+"\nexit 0\n", 0o755)
	write("interpnoexec.sh", "#!"+filepath.Join(dir, "noexec.sh")+"\nexit 0\n", 0o755)
	write("noexec.sh", "#!/bin/sh\nexit 0\n", 0o644)
	write("a/tool", "#!/bin/sh\nexit 0\n", 0o644) // found first, not executable
	write("b/tool", "#!/bin/sh\nexit 0\n", 0o755)
	write("a/only", "#!/bin/sh\nexit 0\n", 0o644)
	write("c/local", "#!/bin/sh\nexit 0\n", 0o755)
	if err := os.Mkdir(filepath.Join(dir, "subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	pathAB := "PATH=" + filepath.Join(dir, "a") + ":" + filepath.Join(dir, "b") + ":/usr/bin:/bin"

	for _, tc := range []struct {
		name     string
		argv     []string
		env      string // PATH=...
		wantCode int    // 0: resolves
		wantPath string // when it resolves
		shell    bool   // run by /bin/sh
		errText  string
	}{
		{"binary in PATH", []string{"true"}, "PATH=/usr/bin:/bin", 0, trueBin, false, ""},
		{"absolute binary", []string{trueBin}, "", 0, trueBin, false, ""},
		{"script", []string{"./script.sh"}, "", 0, filepath.Join(dir, "script.sh"), false, ""},
		{"#! with blanks and an argument", []string{"./shebang-spaces.sh"}, "", 0, filepath.Join(dir, "shebang-spaces.sh"), false, ""},
		{"no #! runs through sh", []string{"./noshebang.sh", "x"}, "", 0, "/bin/sh", true, ""},
		{"empty file runs through sh", []string{"./empty"}, "", 0, "/bin/sh", true, ""},
		{"bare name missing from PATH", []string{"no-such-command-xyz"}, "PATH=/usr/bin:/bin", 127, "", false, "executable file not found in $PATH"},
		{"absolute path missing", []string{filepath.Join(dir, "missing")}, "", 127, "", false, "no such file or directory"},
		{"relative path missing", []string{"./missing"}, "", 127, "", false, "no such file or directory"},
		{"missing interpreter", []string{"./nointerp.sh"}, "", 127, "", false, "#! interpreter /no/such/interpreter"},
		{"directory", []string{"./subdir"}, "", 126, "", false, "is a directory"},
		{"no execute permission", []string{"./noexec.sh"}, "", 126, "", false, "permission denied"},
		{"interpreter is a directory", []string{"./interpdir.sh"}, "", 126, "", false, "is a directory"},
		{"interpreter not executable", []string{"./interpnoexec.sh"}, "", 126, "", false, "permission denied"},
		{"path below a file", []string{"./script.sh/x"}, "", 126, "", false, "not a directory"},
		{"PATH skips a non-executable match", []string{"tool"}, pathAB, 0, filepath.Join(dir, "b", "tool"), false, ""},
		{"PATH with only a non-executable match", []string{"only"}, pathAB, 126, "", false, "permission denied"},
		{"empty PATH entry is the directory", []string{"local"}, "PATH=/usr/bin::/bin", 0, "", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runDir := dir
			if tc.name == "empty PATH entry is the directory" {
				runDir = filepath.Join(dir, "c")
				tc.wantPath = filepath.Join(runDir, "local")
			}
			var env []string
			if tc.env != "" {
				env = []string{"HOME=/", tc.env}
			} else {
				env = []string{"HOME=/", "PATH=/usr/bin:/bin"}
			}
			path, argv, err := Resolve(tc.argv, runDir, env)

			// env(1), run for real, is the reference.
			cmd := exec.Command(envBin, append([]string{"--"}, tc.argv...)...)
			cmd.Dir, cmd.Env = runDir, env
			out, _ := cmd.CombinedOutput()
			if have := cmd.ProcessState.ExitCode(); have != tc.wantCode {
				t.Fatalf("test table disagrees with env(1): env exits %d, table says %d\n%s", have, tc.wantCode, out)
			}

			if tc.wantCode != 0 {
				var ee *ExecError
				if !errors.As(err, &ee) {
					t.Fatalf("want an *ExecError with code %d, have %v", tc.wantCode, err)
				}
				if ee.Code != tc.wantCode {
					t.Fatalf("want code %d, have %d (%v)", tc.wantCode, ee.Code, err)
				}
				if !errors.Is(err, ErrStart) {
					t.Fatalf("want the error to match ErrStart, have %v", err)
				}
				if !strings.Contains(err.Error(), tc.errText) || !strings.Contains(err.Error(), tc.argv[0]) {
					t.Fatalf("want %q and the command's name in the message, have %q", tc.errText, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("want it to resolve, have %v", err)
			}
			if path != tc.wantPath {
				t.Fatalf("want path %s, have %s", tc.wantPath, path)
			}
			want := tc.argv
			if tc.shell {
				want = append([]string{"/bin/sh", filepath.Join(dir, strings.TrimPrefix(tc.argv[0], "./"))}, tc.argv[1:]...)
			}
			if !slices.Equal(argv, want) {
				t.Fatalf("want argv %q, have %q", want, argv)
			}
		})
	}
}

func TestResolveEmptyCommand(t *testing.T) {
	for _, argv := range [][]string{nil, {}, {""}, {"", "x"}} {
		if _, _, err := Resolve(argv, "", nil); !errors.Is(err, ErrEmptyCommand) {
			t.Errorf("Resolve(%q): want ErrEmptyCommand, have %v", argv, err)
		}
	}
}

// TestResolveUsesTheChildsPATH: the search uses the PATH of the
// environment the child gets, not leasewrap's own.
func TestResolveUsesTheChildsPATH(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "only-here")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if path, _, err := Resolve([]string{"only-here"}, "", []string{"PATH=/usr/bin", "PATH=" + dir}); err != nil || path != p {
		t.Fatalf("want %s from the last PATH entry, have %q, %v", p, path, err)
	}
	if _, _, err := Resolve([]string{"only-here"}, "", []string{"PATH=/usr/bin"}); err == nil {
		t.Fatal("want not found with a PATH that lacks the directory")
	}
}
