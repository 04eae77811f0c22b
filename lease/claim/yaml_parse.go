package claim

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"go.yaml.in/yaml/v3"
)

// parseRecord reads a claim file's text as the Python reader does: a YAML
// mapping whose unknown fields are ignored, null and absent optional
// fields alike, schema_version defaulting to 1. Plain scalars are typed
// with PyYAML's (YAML 1.1) resolvers. It returns a reason string (never an
// error value) when the text must be treated as Corrupted.
//
// Text longer than MaxRecordBytes, or nested deeper than MaxNesting, is
// refused before it is interpreted; the rest of the work is linear in the
// text (mappings are indexed, never compared pairwise).
func parseRecord(text []byte) (*Record, string) {
	if len(text) > MaxRecordBytes {
		return nil, fmt.Sprintf("larger than %d bytes (%d MiB), the bound on a claim file; no writer produces such a claim", MaxRecordBytes, MaxRecordBytes>>20)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, fmt.Sprintf("YAML parse failed: %v", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, "empty document, not a mapping"
	}
	if reason := checkTree(doc.Content[0]); reason != "" {
		return nil, reason
	}
	root := deref(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return nil, "the document root is not a mapping"
	}
	fields := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := deref(root.Content[i])
		if k.Kind != yaml.ScalarNode {
			continue
		}
		kv, err := scalarValue(k)
		if err != nil {
			continue
		}
		if s, ok := kv.(string); ok {
			fields[s] = deref(root.Content[i+1]) // last one wins, as in Python
		}
	}
	rec := &Record{SchemaVersion: SchemaVersion}
	var reason string
	intField := func(name string, required bool, bits int) (*big.Int, bool) {
		n, ok := fields[name]
		if !ok || isNull(n) {
			if required && reason == "" {
				reason = fmt.Sprintf("field %s is missing", name)
			}
			return nil, false
		}
		v, err := nodeValue(n)
		bi, isInt := v.(*big.Int)
		if err != nil || !isInt {
			if reason == "" {
				reason = fmt.Sprintf("field %s is not an integer", name)
			}
			return nil, false
		}
		if bi.BitLen() >= bits {
			if reason == "" {
				reason = fmt.Sprintf("field %s is out of range", name)
			}
			return nil, false
		}
		return bi, true
	}
	strField := func(name string, required bool) *string {
		n, ok := fields[name]
		if !ok || isNull(n) {
			if required && reason == "" {
				reason = fmt.Sprintf("field %s is missing", name)
			}
			return nil
		}
		v, err := nodeValue(n)
		s, isStr := v.(string)
		if err != nil || !isStr {
			if reason == "" {
				reason = fmt.Sprintf("field %s is not a string", name)
			}
			return nil
		}
		return &s
	}
	if v, ok := intField("schema_version", false, 32); ok {
		rec.SchemaVersion = int(v.Int64())
	}
	if s := strField("key", true); s != nil {
		rec.Key = *s
	}
	if s := strField("holder", true); s != nil {
		rec.Holder = *s
	}
	if v, ok := intField("acquired_at", true, 64); ok {
		rec.AcquiredAt = v.Int64()
	}
	if v, ok := intField("pid", true, 32); ok {
		rec.PID = int(v.Int64())
	}
	if s := strField("host", true); s != nil {
		rec.Host = *s
	}
	rec.MachineID = strField("machine_id", false)
	if v, ok := intField("expires_at", false, 64); ok {
		rec.ExpiresAt = i64Ptr(v.Int64())
	}
	rec.Reason = strField("reason", false)
	rec.Harness = strField("harness", false)
	if n, ok := fields["metadata"]; ok && !isNull(n) {
		v, err := nodeValue(n)
		m, isMap := v.(Metadata)
		switch {
		case err != nil:
			reason = fmt.Sprintf("field metadata: %v", err)
		case !isMap:
			reason = "field metadata is not a mapping"
		default:
			rec.Metadata = m
		}
	}
	if reason != "" {
		return nil, reason
	}
	if rec.SchemaVersion > SchemaVersion {
		return nil, fmt.Sprintf("schema_version=%d > supported=%d; refusing to read a newer writer's record", rec.SchemaVersion, SchemaVersion)
	}
	if rec.Key == "" || rec.Holder == "" {
		return nil, "claim key/holder must be non-empty"
	}
	return rec, ""
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	if n.Kind != yaml.ScalarNode {
		return false
	}
	v, err := scalarValue(n)
	return err == nil && v == nil
}

// nodeValue converts a YAML node to a metadata value.
func nodeValue(n *yaml.Node) (any, error) {
	n = deref(n)
	switch n.Kind {
	case yaml.ScalarNode:
		return scalarValue(n)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := nodeValue(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := Metadata{}
		index := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			kv, err := nodeValue(n.Content[i])
			if err != nil {
				return nil, err
			}
			k, ok := kv.(string)
			if !ok {
				return nil, fmt.Errorf("mapping key %v is not a string", kv)
			}
			v, err := nodeValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			// A repeated key keeps its first position and its last value.
			if j, ok := index[k]; ok {
				out[j].Value = v
			} else {
				index[k] = len(out)
				out = append(out, Field{k, v})
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported YAML node kind %d", n.Kind)
}

// scalarValue types a scalar as PyYAML's SafeLoader would. Timestamps are
// kept as their text (a documented simplification).
func scalarValue(n *yaml.Node) (any, error) {
	tag := ""
	switch {
	case n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 && n.Style&yaml.TaggedStyle == 0:
		return n.Value, nil
	case n.Style&yaml.TaggedStyle != 0:
		tag = strings.TrimPrefix(strings.TrimPrefix(n.Tag, "tag:yaml.org,2002:"), "!!")
	default:
		tag = resolvePlain(n.Value)
	}
	switch tag {
	case tagNull:
		return nil, nil
	case tagBool:
		switch strings.ToLower(strings.TrimSuffix(n.Value, "\n")) {
		case "yes", "true", "on":
			return true, nil
		}
		return false, nil
	case tagInt:
		v, ok := constructInt(n.Value)
		if !ok {
			return nil, fmt.Errorf("bad integer %q", n.Value)
		}
		return v, nil
	case tagFloat:
		f, ok := constructFloat(n.Value)
		if !ok || (math.IsInf(f, 0) && !strings.Contains(strings.ToLower(n.Value), "inf")) {
			return nil, fmt.Errorf("bad float %q", n.Value)
		}
		return f, nil
	}
	return n.Value, nil
}
