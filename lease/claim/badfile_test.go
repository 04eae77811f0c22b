package claim

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Regressions from the reliability battery's bad-input table: a FIFO at
// the claim path hung every acquire and status forever (os.ReadFile
// blocks opening a FIFO with no writer), and a dangling symlink made
// Acquire spin through its contention retries (link(2) says EEXIST, the
// read says ENOENT) and fail with an internal error. Both are files that
// cannot be trusted: refused as corrupted, left in place, promptly.
func TestNonRegularClaimFilesAreCorruptedNotHangs(t *testing.T) {
	for name, plant := range map[string]func(path string) error{
		"fifo":             func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"dangling symlink": func(p string) error { return os.Symlink(filepath.Join(filepath.Dir(p), "nowhere"), p) },
		"directory":        func(p string) error { return os.Mkdir(p, 0o755) },
	} {
		t.Run(name, func(t *testing.T) {
			c, root := newTestClaims(t)
			path := lockfile(t, root, "k")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := plant(path); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := c.Acquire(t.Context(), "k", "h", AcquireOptions{})
				done <- err
			}()
			select {
			case err := <-done:
				var ce *CorruptError
				if !errors.As(err, &ce) {
					t.Fatalf("want a *CorruptError, have %T %v", err, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Acquire hung on the planted file")
			}
			if st := c.Status("k"); st.State != Corrupted {
				t.Errorf("want status corrupted, have %v", st.State)
			}
			if _, err := os.Lstat(path); err != nil {
				t.Errorf("planted file removed: %v", err)
			}
		})
	}
}
