// Package pyyaml reads and writes YAML as PyYAML's yaml.safe_load and
// yaml.safe_dump(sort_keys=False) do, for files Python peers share.
//
// Dump writes a Mapping (ordered, as a Python dict) byte for byte as PyYAML's
// Emitter with its defaults (width 80, indent 2, allow_unicode False): block
// collections, empty flow collections, plain or quoted scalars folded at
// column 80, ASCII escapes outside printable ASCII, and strings PyYAML would
// read as another type ("yes", "1:30", "2024-01-02", "") quoted as PyYAML
// quotes them. Values: nil, bool, *big.Int, int, int64, float64, string,
// []any and Mapping.
//
// Load types plain scalars with PyYAML's YAML 1.1 implicit resolvers in its
// order (yes/no/on/off, sexagesimal and 0b/0o/0x integers, .inf/.nan, ~),
// honours !!str/!!int/!!float/!!bool/!!null, aliases and repeated keys
// (first position, last value); integers are *big.Int of any size.
//
// Not guaranteed: Dump writes no anchors, tags, block scalars or complex
// keys; timestamps stay text; other tags are read as text or refused; the
// syntax is go.yaml.in/yaml/v3's (YAML 1.2), only the typing is PyYAML's;
// Load bounds only what Limits says, the caller bounds the text's size.
// go-yaml's own encoder writes forms a Python peer misreads (bench/LOG.md).
package pyyaml
