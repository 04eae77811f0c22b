package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runVerbs are the three run verbs, each with its flags and a check that
// nothing was acquired (no claim file, no reservation, no owner record).
func runVerbs(t *testing.T) []struct {
	name       string
	args       []string
	env        []string
	leftBehind func() []string
} {
	t.Helper()
	claimRoot, claimE := claimEnv(t)
	home, reserveE := reserveEnv(t)
	sroot := sessionRoot(t)
	flockPath := filepath.Join(t.TempDir(), "job.lock")
	return []struct {
		name       string
		args       []string
		env        []string
		leftBehind func() []string
	}{
		{"claim", []string{"claim", "run", "job", "--root", claimRoot}, claimE, func() []string {
			m, _ := filepath.Glob(filepath.Join(claimRoot, ".fno", "claims", "*"))
			return m
		}},
		{"reserve", []string{"reserve", "run", "job"}, reserveE, func() []string {
			m, _ := filepath.Glob(filepath.Join(home, "idempotency", "*"))
			var out []string
			for _, p := range m {
				if !strings.HasSuffix(p, ".lock") && filepath.Base(p) != "materializers" {
					out = append(out, p)
				}
			}
			return out
		}},
		{"session", []string{"session", "run", testSID, "--root", sroot, "--epoch", "6"}, nil, func() []string {
			return ownerRecords(t, sroot)
		}},
		{"flock", []string{"flock", "run", flockPath}, nil, func() []string {
			if exec.Command("flock", "-n", flockPath, "true").Run() != nil {
				return []string{flockPath + " still locked"}
			}
			return nil
		}},
	}
}

// TestRunVerbsExecFailures: a command that cannot run exits with env(1)'s
// code (127 not found, 126 not executable), is refused before anything is
// acquired, and says why; an empty command is usage (64); a file without
// #! runs through /bin/sh, as execvp does.
func TestRunVerbsExecFailures(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noInterp := write("nointerp.sh", "#!/no/such/interpreter\necho ran\n", 0o755)
	noExec := write("noexec.sh", "#!/bin/sh\necho ran\n", 0o644)
	noShebang := write("plain.sh", "echo \"plain ran with $1\"\n", 0o755)
	subdir := filepath.Join(dir, "subdir")
	if err := os.Mkdir(subdir, 0o755); err != nil {
		t.Fatal(err)
	}

	for _, verb := range runVerbs(t) {
		for _, tc := range []struct {
			name    string
			command []string
			want    int
			text    string
		}{
			{"absolute path missing", []string{filepath.Join(dir, "missing")}, 127, "no such file or directory"},
			{"bare name missing", []string{"no-such-command-xyz"}, 127, "executable file not found in $PATH"},
			{"missing interpreter", []string{noInterp}, 127, "#! interpreter /no/such/interpreter"},
			{"directory", []string{subdir}, 126, "is a directory"},
			{"no execute permission", []string{noExec}, 126, "permission denied"},
			{"empty command", []string{""}, 64, "the command is empty"},
			{"no #! runs through sh", []string{noShebang, "arg1"}, 0, ""},
		} {
			t.Run(verb.name+"/"+tc.name, func(t *testing.T) {
				args := append(append(append([]string{}, verb.args...), "--"), tc.command...)
				have, p := runLW(t, verb.env, args...)
				if have != tc.want {
					t.Fatalf("want %d, have %d\nstderr:\n%s", tc.want, have, &p.stderr)
				}
				if tc.want == 0 {
					if !strings.Contains(p.stdout.String(), "plain ran with arg1") {
						t.Fatalf("want the script run by /bin/sh, have stdout:\n%s\nstderr:\n%s", &p.stdout, &p.stderr)
					}
					return
				}
				if !strings.Contains(p.stderr.String(), tc.text) {
					t.Fatalf("want %q on stderr, have:\n%s", tc.text, &p.stderr)
				}
				if tc.want != 64 && !strings.Contains(p.stderr.String(), tc.command[0]) {
					t.Fatalf("want the message to name %s, have:\n%s", tc.command[0], &p.stderr)
				}
				if strings.Contains(p.stdout.String(), "ran") {
					t.Fatalf("the command ran:\n%s", &p.stdout)
				}
				if left := verb.leftBehind(); len(left) != 0 {
					t.Fatalf("a command that cannot run left a lease behind: %v", left)
				}
			})
		}
	}
}

// TestRunVerbsRefuseATooShortRenewPeriod: --renew-every below 100 ms is
// usage (64), naming the rule; 100 ms itself is accepted.
func TestRunVerbsRefuseATooShortRenewPeriod(t *testing.T) {
	for _, verb := range runVerbs(t) {
		for _, tc := range []struct {
			every string
			want  int
		}{{"1ns", 64}, {"99ms", 64}, {"100ms", 0}} {
			t.Run(verb.name+"/"+tc.every, func(t *testing.T) {
				args := append(append([]string{}, verb.args...), "--renew-every", tc.every, "--", "true")
				have, p := runLW(t, verb.env, args...)
				if have != tc.want {
					t.Fatalf("want %d, have %d\n%s", tc.want, have, &p.stderr)
				}
				if tc.want == 64 && !strings.Contains(p.stderr.String(), "--renew-every "+tc.every+" is below the minimum of 100ms") {
					t.Fatalf("want the rule named on stderr, have:\n%s", &p.stderr)
				}
			})
		}
	}
}
