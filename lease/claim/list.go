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

// Listed is one entry of a claims directory as List saw it: the status of
// the file (Key is the key its name encodes, the key peers find it under),
// its file name, and Problem when the entry does not belong where it is.
type Listed struct {
	Status
	// Name is the entry's file name in the claims directory.
	Name string
	// Problem is "" for a claim file where it belongs; otherwise what is
	// wrong: a name that is not the encoding of the record's key (a copy
	// or a misnamed file), a name that is not a key encoding at all, or an
	// entry that is not a regular file (a directory, a symlink, a device).
	Problem string
}

// List returns every *.lock entry of the claims directory of the explicit
// root (or the global root), faithfully: one row per entry, sorted by key
// then name, keeping those whose key starts with prefix. Each row's Key is
// the key its file name encodes, and the row is flagged (Problem) when the
// entry does not belong: see Listed. Files that are gone by the time they
// are read are left out; dot files (temp files), recovery mutexes
// (*.lock.recovery.d) and .expired/ are not claims and are skipped. List
// changes nothing.
func (c *Claims) List(prefix string) ([]Listed, error) {
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
	var out []Listed
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".lock") {
			continue
		}
		path := filepath.Join(dir, name)
		enc := strings.TrimSuffix(name, ".lock")
		key, decoded := decodeKey(enc)
		if !decoded {
			key = enc
		}
		st := c.statusAt(key, path)
		if st.State == Free || !strings.HasPrefix(key, prefix) {
			continue
		}
		out = append(out, Listed{Status: st, Name: name, Problem: problem(e.Type(), path, name, key, decoded, st.Record)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Key != out[j].Key {
			return out[i].Key < out[j].Key
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// problem says why an entry does not belong, or "".
func problem(typ fs.FileMode, path, name, key string, decoded bool, rec *Record) string {
	switch {
	case typ&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return fmt.Sprintf("not a regular file: a symbolic link to %s", target)
	case typ.IsDir():
		return "not a regular file: a directory"
	case !typ.IsRegular():
		return fmt.Sprintf("not a regular file (%v)", typ.Type())
	case !decoded:
		return "file name is not a percent-encoded key"
	case rec != nil && rec.Key != key:
		return fmt.Sprintf("file name does not match key: the record is for %q, whose file is %s.lock", rec.Key, EncodeKey(rec.Key))
	case EncodeKey(key)+".lock" != name:
		return fmt.Sprintf("file name is not the canonical encoding of its key: peers look for %s.lock", EncodeKey(key))
	}
	return ""
}
