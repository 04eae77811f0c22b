package claim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// List returns the status of every claim file in the claims directory of
// the explicit root (or the global root), sorted by key, keeping those
// whose key starts with prefix. Temp files, mutexes and .expired/ are
// skipped. A corrupted file's key is decoded from its file name.
func (c *Claims) List(prefix string) ([]Status, error) {
	dir, err := c.Dir("")
	if err != nil {
		return nil, fmt.Errorf("%w: pass a root, or set $FNO_CLAIMS_ROOT or $HOME", err)
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []Status
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".lock") || e.IsDir() {
			continue
		}
		path := filepath.Join(dir, name)
		st := c.statusAt("", path)
		key := ""
		if st.Record != nil {
			key = st.Record.Key
		} else if k, ok := decodeKey(strings.TrimSuffix(name, ".lock")); ok {
			key = k
		} else {
			key = strings.TrimSuffix(name, ".lock")
		}
		st.Key = key
		if st.State == Free || !strings.HasPrefix(key, prefix) {
			continue
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}
