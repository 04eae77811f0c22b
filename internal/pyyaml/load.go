package pyyaml

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Limits bound what Load accepts beyond the text's own size.
type Limits struct {
	// Nesting bounds collection depth, the root counting one (0: no bound).
	Nesting int
	// AliasNodes bounds the nodes reached through aliases (0: no bound),
	// against alias bombs.
	AliasNodes int
}

// ErrTooDeep and ErrAliasBudget match Load errors for a document beyond
// Limits.Nesting or Limits.AliasNodes.
var (
	ErrTooDeep     = errors.New("collections nest too deeply")
	ErrAliasBudget = errors.New("aliases expand to too many nodes")
)

// Document is a loaded YAML document whose root is a mapping; values are
// typed on demand (Value), so an entry nobody asks for cannot make it unreadable.
type Document struct {
	fields map[string]*yaml.Node
}

// Load parses text as one YAML document whose root is a mapping, checking
// lim first. Non-string root keys are skipped; a repeated key's last value wins.
func Load(text []byte, lim Limits) (*Document, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, fmt.Errorf("YAML parse failed: %v", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, errors.New("empty document, not a mapping")
	}
	if err := checkTree(doc.Content[0], lim); err != nil {
		return nil, err
	}
	root := deref(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return nil, errors.New("the document root is not a mapping")
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
	return &Document{fields: fields}, nil
}

// Value returns the root entry key typed as PyYAML's SafeLoader would: nil
// when absent or null, an error when it cannot be constructed.
func (d *Document) Value(key string) (any, error) {
	n, ok := d.fields[key]
	if !ok || isNull(n) {
		return nil, nil
	}
	return nodeValue(n)
}

// checkTree walks n following aliases and fails past lim.Nesting, or when
// nodes reached through aliases exceed lim.AliasNodes (nodeValue would expand
// them exponentially). The depth bound also stops a self-containing anchor.
func checkTree(n *yaml.Node, lim Limits) error {
	budget := lim.AliasNodes
	var walk func(n *yaml.Node, depth int, viaAlias bool) error
	walk = func(n *yaml.Node, depth int, viaAlias bool) error {
		if n.Kind == yaml.AliasNode {
			viaAlias = true
			n = deref(n)
		}
		if viaAlias && lim.AliasNodes > 0 {
			if budget--; budget < 0 {
				return fmt.Errorf("%w: more than %d", ErrAliasBudget, lim.AliasNodes)
			}
		}
		if n.Kind != yaml.MappingNode && n.Kind != yaml.SequenceNode {
			return nil
		}
		if depth++; lim.Nesting > 0 && depth > lim.Nesting {
			return fmt.Errorf("%w: deeper than %d levels", ErrTooDeep, lim.Nesting)
		}
		for _, c := range n.Content {
			if err := walk(c, depth, viaAlias); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(n, 0, false)
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
		var b Builder
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
			b.Set(k, v) // a repeated key: first position, last value
		}
		return b.Mapping(), nil
	}
	return nil, fmt.Errorf("unsupported YAML node kind %d", n.Kind)
}

// scalarValue types a scalar as PyYAML's SafeLoader would; timestamps stay text.
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
