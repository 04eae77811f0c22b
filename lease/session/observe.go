package session

import (
	"errors"
	"io/fs"
	"os"
	"sort"
)

// Observation is the seed's SessionOwnerObservation.
type Observation struct {
	Owner    Owner
	Liveness Liveness
	// Path is where the record was read.
	Path string
}

// OwnerObservations is session_owner_observations: decodable records with their
// liveness, sorted by token; a missing or unreadable directory is no owners.
func (s *Store) OwnerObservations(sid ID) ([]Observation, error) {
	recs, err := s.inspect(sid, false)
	if err != nil {
		return nil, err
	}
	var out []Observation
	for _, r := range recs {
		if r.Err == nil {
			out = append(out, Observation{Owner: *r.Owner, Liveness: r.Liveness, Path: r.Path})
		}
	}
	return out, nil
}

// ActiveOwners is active_session_owners: Live and Unverifiable records, by token.
func (s *Store) ActiveOwners(sid ID) ([]Owner, error) {
	obs, err := s.OwnerObservations(sid)
	if err != nil {
		return nil, err
	}
	var out []Owner
	for _, o := range obs {
		if o.Liveness == Live || o.Liveness == Unverifiable {
			out = append(out, o.Owner)
		}
	}
	return out, nil
}

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
func (s *Store) Inspect(sid ID) ([]Record, error) { return s.inspect(sid, true) }

func (s *Store) inspect(sid ID, strictOpen bool) ([]Record, error) {
	dir := s.OwnerDir(sid)
	d, err := os.Open(dir)
	if err != nil {
		if !strictOpen || errors.Is(err, fs.ErrNotExist) {
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
