package reliability

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// badFile plants content (or a special file) at a path leasewrap reads.
type badFile struct {
	name  string
	plant func(t *testing.T, path string)
}

func content(b []byte) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func badFiles(wrongTyped, newer []byte) []badFile {
	huge := bytes.Repeat([]byte("x"), 4<<20)
	return []badFile{
		{"empty", content(nil)},
		{"truncated", content(wrongTyped[:len(wrongTyped)/2])},
		{"huge-4MiB", content(huge)},
		{"binary", content([]byte{0, 0xff, 0xfe, 1, 2, 3, 0x80, '\n'})},
		{"wrong-typed", content(wrongTyped)},
		{"newer-schema", content(newer)},
		{"symlink", func(t *testing.T, p string) {
			target := filepath.Join(filepath.Dir(p), "zz-symlink-target")
			os.WriteFile(target, newer, 0o644)
			os.Symlink(target, p)
		}},
		{"dangling-symlink", func(t *testing.T, p string) { os.Symlink(filepath.Join(filepath.Dir(p), "nowhere"), p) }},
		{"directory", func(t *testing.T, p string) { os.Mkdir(p, 0o755) }},
		{"fifo", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
}

// snapshot describes path without following it, for "nothing lost".
func snapshot(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return "absent"
	}
	s := fi.Mode().String()
	if fi.Mode().IsRegular() {
		b, _ := os.ReadFile(path)
		s += fmt.Sprintf(" %d bytes %x", len(b), b[:min(len(b), 32)])
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		l, _ := os.Readlink(path)
		s += " -> " + l
	}
	return s
}

// TestBadFiles plants every bad file where each kind keeps its record (and
// its lock) and runs the kind through the CLI. Each must end in bounded
// time with a refusal that names the problem (exit 65, or 75 when the
// protocol reads the file as a live holder), never run the command on a
// record it cannot trust, and leave the planted file as it was.
func TestBadFiles(t *testing.T) {
	claimWrong := []byte("schema_version: 1\nkey: reliability-key\nholder: h\nacquired_at: 1\npid: not-a-pid\nhost: h\n")
	claimNewer := []byte("schema_version: 2\nkey: reliability-key\nholder: h\nacquired_at: 1\npid: 1\nhost: h\n")
	resWrong := []byte(`{"schema_version":"1","run_id":"01aaaaaaaaaaaaaaaaaaaaaaaa","stale_run_ids":[]}`)
	resNewer := []byte(`{"schema_version":2,"run_id":"01aaaaaaaaaaaaaaaaaaaaaaaa","stale_run_ids":[]}`)
	ownWrong := []byte(`{"session_id":5,"pid":"x"}`)
	targets := []struct {
		k          kind
		record     bool // the kind's record: exit 0 (accepting it) is wrong
		where      string
		path       func(e *env) string
		wrong, new []byte
	}{
		{kindClaimPID, true, "claim record", func(e *env) string { return claimPath(e.claimRoot(), "reliability-key") }, claimWrong, claimNewer},
		{kindClaimPID, false, "claim recovery mutex", func(e *env) string { return claimPath(e.claimRoot(), "reliability-key") + ".recovery.d" }, claimWrong, claimNewer},
		{kindReserve, true, "reservation record", func(e *env) string { return reservationPath(e.reserveHome(), "reliability-key") }, resWrong, resNewer},
		{kindReserve, false, "reservation key lock", func(e *env) string { return reservationPath(e.reserveHome(), "reliability-key") + ".lock" }, resWrong, resNewer},
		{kindSession, true, "session owner record", func(e *env) string {
			return filepath.Join(ownerDir(e.sessionRoot(), testSID), "0123456789abcdef0123456789abcdef.json")
		}, ownWrong, ownWrong},
		{kindSession, false, "session lock", func(e *env) string { return filepath.Join(e.sessionRoot(), "locks", testSID+".lock") }, ownWrong, ownWrong},
	}
	for _, tg := range targets {
		for _, bf := range badFiles(tg.wrong, tg.new) {
			if tg.where == "claim recovery mutex" && !long() && bf.name != "empty" && bf.name != "directory" {
				// Each costs the 5 s a release waits for a busy mutex.
				continue
			}
			t.Run(strings.ReplaceAll(tg.where, " ", "-")+"/"+bf.name, func(t *testing.T) {
				e := newEnv(t)
				p := tg.path(e)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				bf.plant(t, p)
				before := snapshot(p)
				start := time.Now()
				r := e.run(tg.k, "bad", 10*time.Millisecond, 0, "")
				ran := readWitness(t, e.witness)["bad"] != nil
				after := snapshot(p)
				t.Logf("RESULT %s | %s | exit %d | ran %v | %s", tg.where, bf.name, r.code, ran, firstLine(r.err))
				if after != before {
					t.Errorf("planted %s changed: %s -> %s", bf.name, before, after)
				}
				if time.Since(start) > 50*time.Second || r.signal != 0 {
					t.Fatalf("leasewrap hung or crashed: %v", r)
				}
				switch r.code {
				case 0:
					// Accepted: only where the planted file is a lock or
					// mutex the protocol may tolerate, never a record.
					// A dangling symlink in the owner directory reads as a
					// record that vanished (lease/session 4253586): no one
					// can hold a flock on it, so ignoring it is safe.
					if tg.record && !(tg.where == "session owner record" && bf.name == "dangling-symlink") {
						t.Errorf("a bad %s was accepted and the command ran", tg.where)
					}
				case 65, 70, 75:
					if ran {
						t.Errorf("refused with %d but the command ran", r.code)
					}
					if strings.TrimSpace(r.err) == "" {
						t.Errorf("refused with %d and no message", r.code)
					}
				default:
					t.Errorf("want 0, 65, 70 or 75, have %v", r)
				}
			})
		}
	}
	noOrphans(t)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 240 {
		s = s[:240] + "…"
	}
	return s
}

// TestHostileNames feeds keys, session ids and run ids with "..", "/",
// newlines and 10 KB of text through the CLI: each is refused as usage
// (64) or refused record (65), or accepted with every file it creates
// inside its root; nothing is written outside the scenario's roots.
// (NUL cannot be passed: argv strings are NUL-terminated.)
func TestHostileNames(t *testing.T) {
	long := strings.Repeat("k", 10<<10)
	names := []string{"..", "../../escape", "a/../../b", "/abs", "a\nb", long}
	for _, nm := range names {
		for _, c := range []struct {
			what string
			args func(e *env) []string
		}{
			{"claim key", func(e *env) []string { return []string{"claim", "run", nm, "--root", e.claimRoot()} }},
			{"reserve key", func(e *env) []string { return []string{"reserve", "run", nm, "--home", e.reserveHome()} }},
			{"reserve run id", func(e *env) []string {
				return []string{"reserve", "run", "k", "--home", e.reserveHome(), "--run-id", nm}
			}},
			{"session id", func(e *env) []string {
				return []string{"session", "run", nm, "--root", e.sessionRoot(), "--epoch", "6"}
			}},
		} {
			label := nm
			if len(label) > 16 {
				label = fmt.Sprintf("%d-bytes", len(nm))
			}
			t.Run(strings.ReplaceAll(c.what, " ", "-")+"/"+strings.NewReplacer("/", "SL", "\n", "NL").Replace(label), func(t *testing.T) {
				e := newEnv(t)
				r := e.lw(e.childEnv("n", 0, 0), append(append(c.args(e), "--"), e.childArgv()...)...)
				t.Logf("RESULT %s | %q | exit %d | %s", c.what, label, r.code, firstLine(r.err))
				if r.code != 0 && r.code != 64 && r.code != 65 {
					t.Errorf("want 0, 64 or 65, have %v", r)
				}
				filepath.Walk(e.dir, func(p string, fi os.FileInfo, err error) error {
					rel, _ := filepath.Rel(e.dir, p)
					top := strings.Split(rel, string(filepath.Separator))[0]
					switch top {
					case ".", "claims", "orchestratectl", "sessions", "witness.log", "events.jsonl", "home":
						return nil
					}
					t.Errorf("file written outside the roots: %s", p)
					return nil
				})
				if _, err := os.Stat(filepath.Join(filepath.Dir(e.dir), "escape")); err == nil {
					t.Errorf("a file escaped the scenario directory")
				}
			})
		}
	}
}

// TestHostileEnvironment: FNO_CLAIMS_ROOT empty or relative and HOME unset
// for a globally routed key; and ORCHESTRATECTL_HOME empty with HOME
// unset. Each ends with a clear error (64/70) or a run whose claim lives
// at the documented place; never a panic.
func TestHostileEnvironment(t *testing.T) {
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"FNO_CLAIMS_ROOT empty, HOME unset", []string{"FNO_CLAIMS_ROOT=", "HOME="}, []string{"claim", "run", "node:x"}},
		{"FNO_CLAIMS_ROOT relative", []string{"FNO_CLAIMS_ROOT=rel/root"}, []string{"claim", "run", "node:x"}},
		{"ORCHESTRATECTL_HOME empty, HOME unset", []string{"ORCHESTRATECTL_HOME=", "HOME="}, []string{"reserve", "run", "k"}},
		{"LEASEWRAP_SESSION_ROOT unset", []string{"LEASEWRAP_SESSION_ROOT="}, []string{"session", "run", testSID, "--epoch", "6"}},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			e := newEnv(t)
			cmd := e.lwCmd(append(e.childEnv("h", 0, 0), c.env...), append(append(c.args, "--"), e.childArgv()...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			r := resultOf(cmd, err, "", stderr.String())
			t.Logf("RESULT %s | exit %d | %s", c.name, r.code, firstLine(r.err))
			if r.signal != 0 || (r.code != 0 && r.code != 64 && r.code != 70) {
				t.Errorf("want 0, 64 or 70, have %v", r)
			}
			if r.code != 0 && strings.TrimSpace(r.err) == "" {
				t.Errorf("failed without a message")
			}
		})
	}
}

// TestReadOnlyAndFullDirectories: a non-root user (uid 65534) against a
// root it cannot write, and a full tmpfs. Each must fail with a message
// and without running the command.
func TestReadOnlyAndFullDirectories(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to switch to uid 65534 and to mount a tmpfs")
	}
	base, err := os.MkdirTemp("", "leasewrap-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755) // uid 65534 must reach the binary and the roots
	bin := filepath.Join(base, "leasewrap")
	if b, err := os.ReadFile(lwBin); err != nil || os.WriteFile(bin, b, 0o755) != nil {
		t.Fatal("copy leasewrap", err)
	}
	run := func(t *testing.T, cred bool, args ...string) result {
		cmd := exec.Command(bin, append(args, "--", "/bin/true")...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "FNO_EVENTS_PATH=/dev/null"}
		if cred {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		return resultOf(cmd, err, "", stderr.String())
	}
	t.Run("read-only-roots", func(t *testing.T) {
		dir := filepath.Join(base, "ro")
		os.Mkdir(dir, 0o755) // owned by root: read-only for uid 65534
		for _, c := range [][]string{
			{"claim", "run", "k", "--root", dir},
			{"reserve", "run", "k", "--home", dir},
			{"session", "run", testSID, "--root", dir, "--epoch", "6"},
		} {
			r := run(t, true, c...)
			t.Logf("RESULT read-only %s | exit %d | %s", c[0], r.code, firstLine(r.err))
			if r.code == 0 || strings.TrimSpace(r.err) == "" {
				t.Errorf("%s on a read-only root: want a failure with a message, have %v", c[0], r)
			}
		}
	})
	t.Run("full-tmpfs", func(t *testing.T) {
		dir := filepath.Join(base, "full")
		os.Mkdir(dir, 0o755)
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k,nr_inodes=64", "tmpfs", dir).CombinedOutput(); err != nil {
			t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
		}
		defer exec.Command("umount", dir).Run()
		fill, _ := os.Create(filepath.Join(dir, "fill"))
		fill.Write(bytes.Repeat([]byte{1}, 1<<20)) // fills 64 KiB, ENOSPC past that
		fill.Close()
		for _, c := range [][]string{
			{"claim", "run", "k", "--root", dir},
			{"reserve", "run", "k", "--home", dir},
			{"session", "run", testSID, "--root", dir, "--epoch", "6"},
		} {
			r := run(t, false, c...)
			t.Logf("RESULT full-fs %s | exit %d | %s", c[0], r.code, firstLine(r.err))
			if r.code == 0 || strings.TrimSpace(r.err) == "" {
				t.Errorf("%s on a full file system: want a failure with a message, have %v", c[0], r)
			}
		}
	})
}
