// Package pyyaml reads and writes YAML as Python's PyYAML does with
// yaml.safe_load and yaml.safe_dump(sort_keys=False), for files that
// Python peers (the fno claims reference, fno.claims) read and write
// beside leasewrap.
//
// The API is small: Dump writes a Mapping (an ordered mapping, as a Python
// dict keeps its insertion order) byte for byte as PyYAML writes it; Load
// parses a document whose root is a mapping, and Document.Value types a
// root entry as PyYAML's SafeLoader would.
//
// What it is compatible with:
//   - Writing: PyYAML's Emitter with its defaults (width 80, indent 2,
//     allow_unicode False): block mappings and sequences, empty flow
//     collections, plain, single- and double-quoted scalars, folding at
//     column 80, ASCII escapes for everything outside printable ASCII.
//     Strings that PyYAML's resolvers would read as another type ("yes",
//     "1:30", "2024-01-02", "") are quoted exactly where PyYAML quotes them.
//     Values: nil, bool, *big.Int, int, int64, float64 (PyYAML's float
//     repr), string, []any and Mapping.
//   - Reading: YAML 1.1 typing of plain scalars with PyYAML's implicit
//     resolvers in PyYAML's order (bool yes/no/on/off, sexagesimal and
//     0b/0o/0x integers, .inf/.nan, ~), explicit !!str/!!int/!!float/
//     !!bool/!!null tags, aliases, repeated keys (first position, last
//     value). Integers are *big.Int of any size; mappings are Mapping.
//     The hand-written matchers of match.go agree with PyYAML's regular
//     expressions on every input (match_test.go, FuzzResolverMatchers).
//
// What it is NOT:
//   - Not a general YAML library: Dump never writes anchors, tags, block
//     scalars or complex keys (PyYAML does not for these shapes either),
//     and a key that PyYAML could not write as a simple key is an error.
//   - Timestamps are kept as their text, not converted to a date (a
//     Python peer reads a datetime); Dump writes such a string back
//     quoted. !!binary, !!set, !!omap and Python-specific tags are read as
//     their text or refused.
//   - Parsing is go.yaml.in/yaml/v3's (YAML 1.2 syntax, libyaml-like), so a
//     document that only PyYAML's pure-Python scanner or only go-yaml
//     refuses is judged as go-yaml judges it; the typing on top is
//     PyYAML's.
//   - Load bounds nesting and alias expansion only as Limits says; the
//     caller bounds the text's size.
//
// It is a port of PyYAML's emitter because go-yaml's encoder writes some
// strings and integers in forms a Python peer reads otherwise, or cannot
// read (bench/LOG.md, "pyyaml").
package pyyaml
