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

// Listed is one entry of a claims directory: its status (Key is the key its name
// encodes), its name, and Problem when it does not belong.
type Listed struct {
	Status
	// Name is the entry's file name in the claims directory.
	Name string
	// Problem is "" for a well-placed claim file; else what is wrong (name not the
	// record key's encoding, not an encoding, or not a regular file).
	Problem string
}

// List returns one row per *.lock entry of the (explicit or global) claims
// directory whose key starts with prefix, sorted by key then name; temp files,
// mutexes and .expired/ are skipped.
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
