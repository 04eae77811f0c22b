package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/cli"
)

// claimEnv isolates a test's claims: events go to the test's directory.
func claimEnv(t *testing.T) (root string, env []string) {
	root = t.TempDir()
	return root, []string{"FNO_EVENTS_PATH=" + filepath.Join(root, "events.jsonl"), "FNO_CLAIMS_ROOT=", "HOME=" + root}
}

func claimFile(root, key string) string {
	return filepath.Join(root, ".fno", "claims", key+".lock")
}

// anchors are --anchor values scripts still pass: all hold the command in
// the exec gate until the claim names its pid.
var anchors = []string{"ptrace", "gate"}

func TestClaimRunExitCodes(t *testing.T) {
	for _, anchor := range anchors {
		for _, tc := range []struct {
			script string
			want   int
		}{{"exit 0", 0}, {"exit 1", 1}, {"exit 7", 7}, {"exit 255", 255}, {"kill -TERM $$", 143}, {"kill -KILL $$", 137}} {
			t.Run(anchor+"/"+tc.script, func(t *testing.T) {
				root, env := claimEnv(t)
				have, p := runLW(t, env, "claim", "run", "job", "--root", root, "--anchor", anchor, "--", "sh", "-c", tc.script)
				if have != tc.want {
					t.Fatalf("want %d, have %d\n%s", tc.want, have, &p.stderr)
				}
				if exists(claimFile(root, "job")) {
					t.Fatal("claim not released after the child exited")
				}
			})
		}
	}
}

func TestClaimRunConflictUsageAndNotFound(t *testing.T) {
	root, env := claimEnv(t)
	ready := filepath.Join(root, "ready")
	holder := startLW(t, env, "claim", "run", "job", "--root", root, "--", "sh", "-c", "touch "+ready+"; sleep 30")
	waitFor(t, "holder's child", func() bool { return exists(ready) })
	ran := filepath.Join(root, "ran")

	for _, tc := range []struct {
		name string
		args []string
		want int
		err  string
	}{
		{"conflict", []string{"claim", "run", "job", "--root", root, "--", "touch", ran}, 75, "is held by leasewrap:"},
		{"conflict override", []string{"claim", "run", "job", "--root", root, "--conflict-exit-code", "3", "--", "touch", ran}, 3, "is held"},
		{"no command", []string{"claim", "run", "other", "--root", root}, 64, "no command given"},
		{"bad flag", []string{"claim", "run", "other", "--root", root, "--frob", "--", "true"}, 64, "unknown flag --frob"},
		{"grace over ttl", []string{"claim", "run", "other", "--root", root, "--ttl", "1m", "--kill-grace", "2m", "--", "true"}, 64, "--kill-grace 2m0s must be shorter than --ttl 1m0s"},
		{"ttl too short", []string{"claim", "run", "other", "--root", root, "--ttl", "10s", "--", "true"}, 64, "--ttl 10s is outside the protocol's bounds"},
		{"bad metadata", []string{"claim", "run", "other", "--root", root, "--metadata", "[1]", "--", "true"}, 64, "metadata must be a JSON object"},
		{"not found", []string{"claim", "run", "other", "--root", root, "--", "no-such-command-xyz"}, 127, "executable file not found"},
		{"not executable", []string{"claim", "run", "other", "--root", root, "--", notExecutable(t)}, 126, "permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have, p := runLW(t, env, tc.args...)
			if have != tc.want {
				t.Fatalf("want %d, have %d\n%s", tc.want, have, &p.stderr)
			}
			if !strings.Contains(p.stderr.String(), tc.err) {
				t.Fatalf("want %q on stderr, have:\n%s", tc.err, &p.stderr)
			}
		})
	}
	if exists(ran) {
		t.Fatal("a command ran although its claim was held")
	}
	if exists(claimFile(root, "other")) {
		t.Fatal("a refused invocation left a claim behind")
	}
	holder.Cmd.Process.Signal(syscall.SIGTERM)
	if have := holder.wait(t); have != 143 {
		t.Fatalf("holder: want 143 (sleep killed by the forwarded TERM), have %d", have)
	}
}

// notExecutable is a script without execute permission.
func notExecutable(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "script.sh")
	if err := os.WriteFile(p, []byte("echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestClaimRunForwardsSignalsAndReleasesAfterTheChild(t *testing.T) {
	for _, anchor := range anchors {
		t.Run(anchor, func(t *testing.T) {
			root, env := claimEnv(t)
			ready := filepath.Join(root, "ready")
			script := fmt.Sprintf(`trap 'echo handler ran; test -e %s && echo claim still held; exit 42' TERM; touch %s; while :; do sleep 0.02; done`,
				claimFile(root, "job"), ready)
			p := startLW(t, env, "claim", "run", "job", "--root", root, "--anchor", anchor, "--", "sh", "-c", script)
			waitFor(t, "child ready", func() bool { return exists(ready) })
			p.Cmd.Process.Signal(syscall.SIGTERM)
			if have := p.wait(t); have != 42 {
				t.Fatalf("want the child's 42, have %d\n%s", have, &p.stderr)
			}
			out := p.stdout.String()
			if !strings.Contains(out, "handler ran") || !strings.Contains(out, "claim still held") {
				t.Fatalf("want the handler to run while the claim is held, have:\n%s", out)
			}
			if exists(claimFile(root, "job")) {
				t.Fatal("claim not released")
			}
		})
	}
}

// acquireJSON runs `leasewrap claim acquire` and decodes its one object.
func acquireJSON(t *testing.T, env []string, args ...string) (int, map[string]any) {
	t.Helper()
	code, p := runLW(t, env, append([]string{"claim", "acquire"}, args...)...)
	var out map[string]any
	if err := json.Unmarshal(p.stdout.Bytes(), &out); err != nil {
		t.Fatalf("claim acquire printed no JSON object (exit %d): %v\nstdout:\n%s\nstderr:\n%s", code, err, &p.stdout, &p.stderr)
	}
	return code, out
}

// TestClaimRunSurvivesSupervisorSIGKILL: leasewrap is SIGKILLed, the
// command runs on and its claim stays live. Once the command is gone, a
// pid-only claim (--ttl 0) is reclaimable at once; a claim with the default
// TTL stays protected (suspect) until it expires: the crash-recovery time
// the default costs.
func TestClaimRunSurvivesSupervisorSIGKILL(t *testing.T) {
	for _, anchor := range anchors {
		for _, ttl := range []string{"0", "default"} {
			t.Run(anchor+"/ttl="+ttl, func(t *testing.T) {
				root, env := claimEnv(t)
				pidFile := filepath.Join(root, "child.pid")
				gone := filepath.Join(root, "gone")
				// The child outlives leasewrap until told to go.
				script := pidThenHoldUntil(pidFile, gone)
				args := []string{"claim", "run", "job", "--root", root, "--anchor", anchor}
				if ttl != "default" {
					args = append(args, "--ttl", ttl)
				}
				p := startLW(t, env, append(args, "--", "sh", "-c", script)...)
				waitFor(t, "child pid", func() bool { return exists(pidFile) })
				b, _ := os.ReadFile(pidFile)
				childPid, _ := strconv.Atoi(strings.TrimSpace(string(b)))

				p.Cmd.Process.Kill()
				p.wait(t)
				if !alive(childPid) {
					t.Fatal("the child died with leasewrap; it should keep running")
				}
				code, out := acquireJSON(t, env, "job", "--holder", "competitor", "--root", root, "--pid", strconv.Itoa(os.Getpid()))
				if code != 1 || out["outcome"] != "held_by_other" || out["pid"] != float64(childPid) {
					t.Fatalf("while the child lives: want held_by_other naming pid %d (exit 1), have exit %d %v", childPid, code, out)
				}

				os.WriteFile(gone, nil, 0o644)
				// A zombie still reads live to the protocol; wait until reaped.
				waitFor(t, "child reaped", func() bool { return !exists(fmt.Sprintf("/proc/%d", childPid)) })
				code, out = acquireJSON(t, env, "job", "--holder", "competitor", "--root", root, "--pid", strconv.Itoa(os.Getpid()))
				if ttl == "0" {
					if code != 0 || out["outcome"] != "acquired" {
						t.Fatalf("after the child exited: want a stale reclaim (exit 0), have exit %d %v", code, out)
					}
					return
				}
				if code != 1 || out["outcome"] != "held_by_other" {
					t.Fatalf("after the child exited: want the TTL claim still protected (exit 1), have exit %d %v", code, out)
				}
				_, st := runLW(t, env, "claim", "status", "job", "--root", root)
				var status map[string]any
				if err := json.Unmarshal(st.stdout.Bytes(), &status); err != nil {
					t.Fatalf("claim status: %v\n%s", err, &st.stdout)
				}
				acquired, _ := status["acquired_at"].(float64)
				expires, _ := status["expires_at"].(float64)
				// Expiry is 2m after the last renewal (none is due in 40s).
				if now := float64(time.Now().UnixMilli()); status["state"] != "suspect" || expires < acquired+120000 || expires > now+120000 {
					t.Fatalf("want a suspect claim expiring 2m after it was taken or renewed, have %v", status)
				}
			})
		}
	}
}

// claimYAML is another holder's live claim record, as a peer writes it.
func claimYAML(key, holder string, pid int) string {
	return fmt.Sprintf("schema_version: 1\nkey: %s\nholder: %s\nacquired_at: %d\npid: %d\nhost: %s\n",
		key, holder, time.Now().UnixMilli(), pid, mustHostname())
}

func mustHostname() string {
	h, _ := os.Hostname()
	return h
}

func TestClaimRunLostLeaseStopsTheChild(t *testing.T) {
	for _, tc := range []struct {
		name, trap string
		minTime    time.Duration
	}{
		{"child obeys SIGTERM", "echo got TERM; exit 0", 0},
		{"child ignores SIGTERM", "", 500 * time.Millisecond},
	} {
		for _, ttl := range []string{"0s", "1m"} {
			t.Run(tc.name+"/ttl="+ttl, func(t *testing.T) {
				root, env := claimEnv(t)
				ready := filepath.Join(root, "ready")
				script := fmt.Sprintf(`trap '%s' TERM; touch %s; while :; do sleep 0.02; done`, tc.trap, ready)
				p := startLW(t, env, "claim", "run", "job", "--root", root, "--ttl", ttl, "--renew-every", "100ms",
					"--kill-grace", "500ms", "--", "sh", "-c", script)
				waitFor(t, "child ready", func() bool { return exists(ready) })
				thief := claimYAML("job", "thief", os.Getpid())
				replaced := time.Now()
				if err := os.WriteFile(claimFile(root, "job"), []byte(thief), 0o644); err != nil {
					t.Fatal(err)
				}
				if have := p.wait(t); have != cli.ExitLost {
					t.Fatalf("want the lease-lost code %d, have %d\n%s", cli.ExitLost, have, &p.stderr)
				}
				if el := time.Since(replaced); el < tc.minTime {
					t.Fatalf("child stopped after %v; want SIGKILL only after the 500ms grace", el)
				}
				if tc.trap != "" && !strings.Contains(p.stdout.String(), "got TERM") {
					t.Fatalf("want the child to get SIGTERM, have:\n%s", &p.stdout)
				}
				if b, _ := os.ReadFile(claimFile(root, "job")); string(b) != thief {
					t.Fatalf("the new holder's claim was touched:\n%s", b)
				}
			})
		}
	}
}

func TestClaimRunWait(t *testing.T) {
	root, env := claimEnv(t)
	ready, gone := filepath.Join(root, "ready"), filepath.Join(root, "gone")
	holder := startLW(t, env, "claim", "run", "job", "--root", root, "--", "sh", "-c", holdUntil(ready, gone))
	waitFor(t, "holder's child", func() bool { return exists(ready) })

	giveUp := time.Now()
	if have, p := runLW(t, env, "claim", "run", "job", "--root", root, "--wait", "100ms", "--", "true"); have != 75 {
		t.Fatalf("short wait: want 75, have %d\n%s", have, &p.stderr)
	}
	if el := time.Since(giveUp); el < 100*time.Millisecond {
		t.Fatalf("gave up after %v, before --wait 100ms", el)
	}

	waiter := startLW(t, env, "claim", "run", "job", "--root", root, "--wait", "20s", "--", "sh", "-c", "echo waiter ran")
	waitFor(t, "the waiter to wait", func() bool { return strings.Contains(waiter.stderr.String(), "lease held; waiting") })
	os.WriteFile(gone, nil, 0o644)
	if have := holder.wait(t); have != 0 {
		t.Fatalf("holder: want 0, have %d", have)
	}
	released := time.Now()
	if have := waiter.wait(t); have != 0 {
		t.Fatalf("waiter: want 0, have %d\n%s", have, &waiter.stderr)
	}
	if !strings.Contains(waiter.stdout.String(), "waiter ran") {
		t.Fatal("the waiter's command did not run")
	}
	t.Logf("waiter finished %v after the holder exited", time.Since(released))
}

func TestClaimRunChildEnvironmentAndDescriptors(t *testing.T) {
	root, env := claimEnv(t)
	have, p := runLW(t, append(env, "LEASEWRAP_FD=9", "CHILD_REPORT=1"), "claim", "run", "job", "--root", root, "--holder", "me", "--", os.Args[0])
	if have != 0 {
		t.Fatalf("want 0, have %d\n%s", have, &p.stderr)
	}
	out := p.stdout.String()
	for _, want := range []string{"LEASEWRAP_KIND=claim\n", "LEASEWRAP_KEY=job\n", "LEASEWRAP_HOLDER=me\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in the child's environment, have:\n%s", want, out)
		}
	}
	if strings.Contains(out, "LEASEWRAP_FD") {
		t.Errorf("a claim hands over no descriptor, yet the child sees LEASEWRAP_FD:\n%s", out)
	}
	want := map[string]bool{"0": true, "1": true, "2": true}
	for _, fd := range inheritedFDs(3) {
		want[fd] = true
	}
	for _, line := range strings.Split(out, "\n") {
		if fd, ok := strings.CutPrefix(line, "fd "); ok && !want[fd] {
			t.Errorf("descriptor %s leaked into the child:\n%s", fd, out)
		}
	}
}

// TestClaimRunUnderStrace runs leasewrap under strace -f: a tracer
// changes nothing, the claim names the command's own pid.
func TestClaimRunUnderStrace(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace not installed; .ci/run installs it")
	}
	root, env := claimEnv(t)
	script := fmt.Sprintf(`read -r _ < /dev/null; grep '^pid:' %s; echo "me: $$"`, claimFile(root, "job"))
	cmd := exec.Command(strace, "-f", "-o", "/dev/null", os.Args[0], "claim", "run", "job", "--root", root, "--log-level", "debug", "--", "sh", "-c", script)
	cmd.Env = append(os.Environ(), append(env, asMainEnv+"=1")...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "PTRACE_TRACEME") || strings.Contains(string(out), "ptrace(") {
			t.Skipf("strace cannot trace here: %s", out)
		}
		t.Fatalf("under strace: %v\n%s", err, out)
	}
	var recorded, me string
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "pid: "); ok {
			recorded = v
		}
		if v, ok := strings.CutPrefix(line, "me: "); ok {
			me = v
		}
	}
	if recorded == "" || recorded != me {
		t.Fatalf("want the claim to name the command's own pid, have claim pid %q, command pid %q\n%s", recorded, me, out)
	}
}

// --metadata is recorded as the Python writer records json.loads of it:
// the object's order kept and integers as integers (it used to go through
// a Go map: keys sorted, 1 written as 1.0).
func TestClaimRunMetadataKeepsOrderAndIntegers(t *testing.T) {
	root, env := claimEnv(t)
	script := "sed -n '/^metadata:/,$p' " + claimFile(root, "job")
	have, p := runLW(t, env, "claim", "run", "job", "--root", root, "--metadata", `{"z":1,"a":"x"}`, "--", "sh", "-c", script)
	if have != 0 {
		t.Fatalf("want 0, have %d\n%s", have, &p.stderr)
	}
	if want := "metadata:\n  z: 1\n  a: x\n"; p.stdout.String() != want {
		t.Fatalf("want %q, have %q", want, p.stdout.String())
	}
}
