package reserve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/leasewrap/leasewrap/internal/fault"
)

// Manifest is the published result of a run leasewrap materialized,
// <home>/runs/<run_id>/manifest.json. Foreign manifests need only exist
// (exit_code optional).
type Manifest struct {
	RunID      string    `json:"run_id"`
	KeyHash    string    `json:"key_hash"`
	Key        string    `json:"key"`
	Repo       *string   `json:"repo"`
	Branch     *string   `json:"branch"`
	Argv       []string  `json:"argv"`
	ExitCode   int       `json:"exit_code"`
	Signal     *int      `json:"signal"` // signal number that killed the child, or null
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Host       string    `json:"host"`
	Writer     string    `json:"writer"`
}

// ManifestWriter is the writer field of manifests leasewrap publishes.
const ManifestWriter = "leasewrap"

// Publish writes <home>/.creating/runs/<id>/manifest.json (file and directory
// fsynced) and renames the directory to <home>/runs/<id>: published from the
// rename on. A leftover staging directory is replaced; a published run is an error.
func Publish(l Layout, m *Manifest) error {
	if err := ValidateRunID(m.RunID); err != nil {
		return err
	}
	stage := l.StagingDir(m.RunID)
	final := filepath.Join(l.RunsDir(), m.RunID)
	if _, err := os.Lstat(final); err == nil {
		return fmt.Errorf("reserve: publish %s: already published", final)
	}
	if err := os.RemoveAll(stage); err != nil {
		return fmt.Errorf("reserve: clear staging %s: %w", stage, err)
	}
	if err := os.MkdirAll(stage, 0o777); err != nil {
		return fmt.Errorf("reserve: mkdir %s: %w", stage, err)
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("reserve: encode manifest: %w", err)
	}
	if err := writeTemp(filepath.Join(stage, "manifest.json"), append(data, '\n')); err != nil {
		return fmt.Errorf("reserve: %w", err)
	}
	fsyncDir(stage)
	fault.Point("reserve.mid-publish")
	if err := os.MkdirAll(l.RunsDir(), 0o777); err != nil {
		return fmt.Errorf("reserve: mkdir %s: %w", l.RunsDir(), err)
	}
	if err := os.Rename(stage, final); err != nil {
		return fmt.Errorf("reserve: publish %s as %s: %w", stage, final, err)
	}
	fsyncDir(l.RunsDir())
	fault.Point("reserve.after-publish")
	fsyncDir(filepath.Dir(stage))
	return nil
}

// IsPublished reports whether runID's manifest exists (following symlinks).
func IsPublished(l Layout, runID string) (bool, error) {
	p := l.ManifestPath(runID)
	if _, err := os.Stat(p); err == nil {
		return true, nil
	} else if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else {
		return false, fmt.Errorf("reserve: check %s: %w", p, err)
	}
}

// Replay is what a published run replays.
type Replay struct {
	RunID    string
	ExitCode int
	// ExitCodeRecorded is false for a foreign manifest without exit_code (replays as 0).
	ExitCodeRecorded bool
	// When is the manifest's finished_at, or its modification time.
	When time.Time
	Path string
}

// ReadReplay reads a published run's manifest. An unreadable one still means
// published; the error is a *RecordError (lease.ErrRefused, ErrManifest).
func ReadReplay(l Layout, runID string) (*Replay, error) {
	p := l.ManifestPath(runID)
	refuse := func(detail string) error {
		return &RecordError{Path: p, Reason: ErrManifest, Detail: detail +
			"; the run is published so it will not run again, but its exit code cannot be replayed. Inspect or repair the manifest"}
	}
	data, err := readManifest(p)
	if err != nil {
		return nil, refuse(fmt.Sprintf("read: %v", err))
	}
	var m struct {
		ExitCode   *int    `json:"exit_code"`
		FinishedAt *string `json:"finished_at"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, refuse(fmt.Sprintf("decode: %v", err))
	}
	r := &Replay{RunID: runID, Path: p}
	if m.ExitCode != nil {
		if *m.ExitCode < 0 || *m.ExitCode > 255 {
			return nil, refuse(fmt.Sprintf("exit_code %d is not an exit status", *m.ExitCode))
		}
		r.ExitCode, r.ExitCodeRecorded = *m.ExitCode, true
	}
	if m.FinishedAt != nil {
		if t, err := time.Parse(time.RFC3339Nano, *m.FinishedAt); err == nil {
			r.When = t
		}
	}
	if r.When.IsZero() {
		if st, err := os.Stat(p); err == nil {
			r.When = st.ModTime()
		}
	}
	return r, nil
}

// readManifest reads at most MaxManifestBytes, following symlinks; a FIFO reads as empty.
func readManifest(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, MaxManifestBytes)
}

// Summary describes the replay for people.
func (r *Replay) Summary() string {
	s := fmt.Sprintf("run %s published %s, exit code %d", r.RunID, r.When.UTC().Format(time.RFC3339), r.ExitCode)
	if !r.ExitCodeRecorded {
		s += " (the manifest records no exit_code; replaying 0)"
	}
	return s
}
