package kubetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// EnvAPIServer names a kube-apiserver binary to use instead of the cached
// build.
const EnvAPIServer = "LEASEWRAP_KUBE_APISERVER"

// buildTimeout bounds a cold build of kube-apiserver (about 5 minutes on
// 2 idle cores).
const buildTimeout = 20 * time.Minute

var apiserver struct {
	once sync.Once
	path string
	err  error
}

// APIServer returns the path of the kube-apiserver binary: $EnvAPIServer
// if set, else the one kube/scripts/build-apiserver.sh keeps in its cache
// directory, which the script builds first when it is not there (once per
// process; a warm call costs the script's stat).
func APIServer() (string, error) {
	apiserver.once.Do(func() {
		if p := os.Getenv(EnvAPIServer); p != "" {
			if _, err := os.Stat(p); err != nil {
				apiserver.err = fmt.Errorf("%s=%s: %w", EnvAPIServer, p, err)
				return
			}
			apiserver.path = p
			return
		}
		root, err := ModuleRoot()
		if err != nil {
			apiserver.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		script := filepath.Join(root, "scripts", "build-apiserver.sh")
		cmd := exec.CommandContext(ctx, "bash", script)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			apiserver.err = fmt.Errorf("%s: %v\n%s", script, err, lastLines(errb.String(), 20))
			return
		}
		apiserver.path = strings.TrimSpace(lastLines(out.String(), 1))
	})
	return apiserver.path, apiserver.err
}

// ModuleRoot is the kube/ directory of the repository: kube/ beside the
// go.mod of github.com/leasewrap/leasewrap, found from the working
// directory upwards.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/leasewrap/leasewrap\n")) {
			return filepath.Join(d, "kube"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("kubetest: no go.mod of github.com/leasewrap/leasewrap above %s", dir)
		}
	}
}

var built struct {
	mu    sync.Mutex
	paths map[string]string
}

// Build builds the package pkg of kube/ (for example
// "./cmd/leasewrap-kube" or "./internal/elector") static, once per process,
// and returns the executable's path. Executables go to a cache directory
// (bin/HASH-OF-THE-CHECKOUT/ beside the API server's), replaced by rename so that processes of
// other test binaries that run an older copy are not disturbed. A build
// failure fails the test: the code under test does not compile.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	built.mu.Lock()
	defer built.mu.Unlock()
	if p, ok := built.paths[pkg]; ok {
		return p
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	// One directory per checkout: two worktrees (or two clones) testing
	// at once must never run each other's build.
	dir := filepath.Join(cacheDir(), "bin", fmt.Sprintf("%016x", fnv64(root)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(pkg))
	tmp := fmt.Sprintf("%s.%d.tmp", dst, os.Getpid())
	cmd := exec.Command("go", "build", "-trimpath", "-o", tmp, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		t.Fatalf("kubetest: go build %s (in %s): %v\n%s", pkg, root, err, out)
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
	if built.paths == nil {
		built.paths = map[string]string{}
	}
	built.paths[pkg] = dst
	return dst
}

// fnv64 is the FNV-1a hash of s.
func fnv64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// cacheDir is where the test executables go: $XDG_CACHE_HOME/leasewrap/kubetest
// (or ~/.cache/…), else the system's temporary directory.
func cacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "leasewrap", "kubetest")
	}
	return filepath.Join(os.TempDir(), "leasewrap-kubetest")
}

// unavailable skips the test for a missing prerequisite, or fails it under
// CI=true, where a skip would hide that nothing was tested.
func unavailable(t testing.TB, format string, a ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, a...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("kubetest: %s (CI=true: a missing prerequisite fails; .ci/run runs kube/scripts/ci.sh first)", msg)
	}
	t.Skipf("kubetest: %s; run bash etcd/scripts/install-etcd.sh and bash kube/scripts/build-apiserver.sh", msg)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// errExited is returned when a server process ends before it is ready.
var errExited = errors.New("exited before it was ready")
