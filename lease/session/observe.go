package session

import (
	"errors"
	"io/fs"
	"os"
	"sort"
)

// Record is one *.json entry as Inspect saw it: an Owner, or Err.
type Record struct {
	Path     string
	Owner    *Owner
	Liveness Liveness
	Err      error
}

// Inspect lists every *.json entry of the owner directory, undecodable ones
// included (sorted by path, after the decoded ones by token), changing nothing.
// A missing directory is no records; an unopenable one is an error.
func (s *Store) Inspect(sid ID) ([]Record, error) {
	dir := s.OwnerDir(sid)
	d, err := os.Open(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, &IOError{Op: "open owner directory", Path: dir, Err: err}
	}
	paths, err := jsonNames(d, dir)
	d.Close()
	if err != nil {
		return nil, &IOError{Op: "read directory", Path: dir, Err: err}
	}
	var recs []Record
	for _, p := range paths {
		o, err := readOwner(p)
		if err != nil {
			recs = append(recs, Record{Path: p, Liveness: Unverifiable, Err: err})
			continue
		}
		recs = append(recs, Record{Path: p, Owner: o, Liveness: classifyLiveness(p, o)})
	}
	sort.SliceStable(recs, func(i, j int) bool {
		a, b := recs[i], recs[j]
		if (a.Owner == nil) != (b.Owner == nil) {
			return a.Owner != nil
		}
		if a.Owner == nil {
			return a.Path < b.Path
		}
		return a.Owner.LeaseToken < b.Owner.LeaseToken
	})
	return recs, nil
}
