package packaging

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

// The release version the test tags its copy of the tree with.
const testVersion = "v0.99.0"

// TestGoInstallAtVersion: `go install github.com/leasewrap/leasewrap/…@VERSION`
// works for every executable. A copy of this tree (tracked and new files)
// becomes a repository of its own, tagged as docs/RELEASING.md says, and
// the go command installs each executable from it into an empty module
// cache, as a user's would from the module proxy: this module comes from a
// file proxy the test fills itself (go mod download of the tag), every
// other module from this machine's module cache when it has it, else from
// the configured GOPROXY. The installed leasewrap says its version, and
// the hint it prints for a missing sibling is a command that installs it.
func TestGoInstallAtVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every executable from an empty module cache")
	}
	_, err := exec.LookPath("git")
	testutil.Need(t, "git", err)
	tree, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	repo := filepath.Join(tmp, "repo")
	gitconfig := filepath.Join(tmp, "gitconfig")
	cache := strings.TrimSpace(run(t, tree, nil, "go", "env", "GOMODCACHE"))
	proxy := strings.TrimSpace(run(t, tree, nil, "go", "env", "GOPROXY"))
	env := []string{
		"GIT_CONFIG_GLOBAL=" + gitconfig, "GIT_CONFIG_NOSYSTEM=1",
		"GOWORK=off", "GOFLAGS=-trimpath -modcacherw", "CGO_ENABLED=0", "GOSUMDB=off",
	}
	run(t, tmp, env, "git", "config", "--file", gitconfig, "user.name", "Release Test")
	run(t, tmp, env, "git", "config", "--file", gitconfig, "user.email", "release-test@localhost")
	run(t, tmp, env, "git", "config", "--file", gitconfig, "url."+repo+".insteadOf", "https://github.com/leasewrap/leasewrap")
	run(t, tmp, env, "git", "config", "--file", gitconfig, "protocol.file.allow", "always")

	// The tree as it is now, committed in a repository of its own and
	// tagged as a release.
	files := strings.Split(strings.TrimSpace(run(t, tree, nil, "git", "ls-files", "-co", "--exclude-standard")), "\n")
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(tree, f))
		if os.IsNotExist(err) {
			continue // deleted, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(filepath.Join(tree, f))
		dst := filepath.Join(repo, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	run(t, repo, env, "git", "init", "-q")
	run(t, repo, env, "git", "add", "-A")
	run(t, repo, env, "git", "commit", "-q", "-m", "tree under test")
	run(t, repo, env, "git", "tag", "-a", "-m", "leasewrap "+testVersion, testVersion)

	// The file proxy: this module at the tag, fetched from the repository
	// by the go command itself (the zip the module proxy would serve).
	served := filepath.Join(tmp, "served")
	run(t, tmp, append(env, "GOPRIVATE=github.com/leasewrap/leasewrap", "GOMODCACHE="+served),
		"go", "mod", "download", "github.com/leasewrap/leasewrap@"+testVersion)
	proxies := "file://" + filepath.Join(served, "cache", "download") + ",file://" + filepath.Join(cache, "cache", "download")
	if proxy != "" && proxy != "off" {
		proxies += "," + proxy
	}
	bin := filepath.Join(tmp, "bin")
	env = append(env, "GOPROXY="+proxies, "GOMODCACHE="+filepath.Join(tmp, "mod"), "GOBIN="+bin)

	// leasewrap alone: its version, then the hint for leasewrap-etcd.
	run(t, tmp, env, "go", "install", "github.com/leasewrap/leasewrap/cmd/leasewrap@"+testVersion)
	lw := filepath.Join(bin, "leasewrap")
	if have := run(t, tmp, nil, lw, "--version"); !strings.HasPrefix(have, "leasewrap "+testVersion+" ") {
		t.Errorf("leasewrap --version: want %s, have %q", testVersion, have)
	}
	cmd := exec.Command(lw, "lock", "run", "x", "--", "true")
	cmd.Env = []string{"PATH=" + filepath.Join(tmp, "empty")}
	out, _ := cmd.CombinedOutput()
	hint := regexp.MustCompile(`go install ([^\s)]+@[^\s)]+)`).FindSubmatch(out)
	if cmd.ProcessState.ExitCode() != 127 || hint == nil {
		t.Fatalf("leasewrap lock without leasewrap-etcd: want 127 and a go install hint, have %d:\n%s", cmd.ProcessState.ExitCode(), out)
	}
	want := "github.com/leasewrap/leasewrap/etcd/cmd/leasewrap-etcd@" + testVersion
	if string(hint[1]) != want {
		t.Fatalf("hint: want go install %s, have %s", want, hint[1])
	}
	run(t, tmp, env, "go", "install", string(hint[1]))
	run(t, tmp, env, "go", "install", "github.com/leasewrap/leasewrap/kube/cmd/leasewrap-kube@"+testVersion)
	for _, exe := range []string{"leasewrap-etcd", "leasewrap-kube"} {
		if have := run(t, tmp, nil, filepath.Join(bin, exe), "--version"); !strings.HasPrefix(have, exe+" "+testVersion+" ") {
			t.Errorf("%s --version: want %s, have %q", exe, testVersion, have)
		}
	}
	// leasewrap finds its sibling beside itself now.
	if have := run(t, tmp, nil, lw, "lock", "--version"); !strings.HasPrefix(have, "leasewrap-etcd "+testVersion) {
		t.Errorf("leasewrap lock --version: want leasewrap-etcd's version, have %q", have)
	}
}

// run runs name in dir with env added to the test's environment, fails
// the test on an error, and returns the standard output.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out)
}
