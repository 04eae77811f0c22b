package reserve

import (
	"fmt"
	"path/filepath"
)

// HomeEnv is the variable that overrides orchestratectl's home directory.
const HomeEnv = "ORCHESTRATECTL_HOME"

// ResolveHome returns the absolute home: explicit, else $ORCHESTRATECTL_HOME,
// else $HOME/.orchestratectl (set-but-empty counts as unset).
func ResolveHome(explicit string, getenv func(string) string) (string, error) {
	dir := explicit
	if dir == "" {
		dir = getenv(HomeEnv)
	}
	if dir == "" {
		h := getenv("HOME")
		if h == "" {
			return "", fmt.Errorf("%w: neither --home, $%s nor $HOME is set; pass --home DIR", ErrNoHome, HomeEnv)
		}
		dir = filepath.Join(h, ".orchestratectl")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("reserve: resolve home %q: %w", dir, err)
	}
	return abs, nil
}

// Layout names the protocol's paths under one home; it touches nothing.
type Layout struct {
	Home string
}

// IdempotencyDir is <home>/idempotency, where records and key locks live.
func (l Layout) IdempotencyDir() string { return filepath.Join(l.Home, "idempotency") }

// RecordPath is <home>/idempotency/<hash>.
func (l Layout) RecordPath(repo, branch, key string) string {
	return filepath.Join(l.IdempotencyDir(), KeyHash(repo, branch, key))
}

// LockPath is <home>/idempotency/<hash>.lock, the per-key flock.
func (l Layout) LockPath(repo, branch, key string) string {
	return filepath.Join(l.IdempotencyDir(), KeyHash(repo, branch, key)+".lock")
}

// MaterializerDir is <home>/idempotency/materializers.
func (l Layout) MaterializerDir() string { return filepath.Join(l.IdempotencyDir(), "materializers") }

// MaterializerPath is <home>/idempotency/materializers/<run_id>.lease.
func (l Layout) MaterializerPath(runID string) string {
	return filepath.Join(l.MaterializerDir(), runID+".lease")
}

// RunsDir is <home>/runs, where published runs live.
func (l Layout) RunsDir() string { return filepath.Join(l.Home, "runs") }

// ManifestPath is <home>/runs/<run_id>/manifest.json; its existence means published.
func (l Layout) ManifestPath(runID string) string {
	return filepath.Join(l.RunsDir(), runID, "manifest.json")
}

// StagingDir is <home>/.creating/runs/<run_id>, renamed into RunsDir to publish.
func (l Layout) StagingDir(runID string) string {
	return filepath.Join(l.Home, ".creating", "runs", runID)
}
