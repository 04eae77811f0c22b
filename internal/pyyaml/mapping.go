package pyyaml

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
)

// Mapping is an ordered mapping, as a Python dict keeps insertion order.
// Values are nil, bool, *big.Int, float64, string, []any, or Mapping.
type Mapping []Field

// Field is one key/value pair of a Mapping.
type Field struct {
	Key   string
	Value any
}

// Builder builds a Mapping as a Python dict is filled: a repeated key keeps
// its first position and takes its last value. The zero Builder is ready.
type Builder struct {
	m     Mapping
	index map[string]int
}

// Set puts key's value.
func (b *Builder) Set(key string, v any) {
	if i, ok := b.index[key]; ok {
		b.m[i].Value = v
		return
	}
	if b.index == nil {
		b.index = map[string]int{}
	}
	b.index[key] = len(b.m)
	b.m = append(b.m, Field{Key: key, Value: v})
}

// Mapping returns what was set, never nil.
func (b *Builder) Mapping() Mapping {
	if b.m == nil {
		return Mapping{}
	}
	return b.m
}

// MarshalJSON writes the mapping as a JSON object in its own order.
func (m Mapping) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSONValue(&b, m); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeJSONValue(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case Mapping:
		b.WriteByte('{')
		for i, f := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSONString(b, f.Key); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := writeJSONValue(b, f.Value); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSONValue(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case *big.Int:
		b.WriteString(x.String())
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			// JSON has no spelling for these; Python writes NaN/Infinity.
			switch {
			case math.IsNaN(x):
				b.WriteString("NaN")
			case x > 0:
				b.WriteString("Infinity")
			default:
				b.WriteString("-Infinity")
			}
			return nil
		}
		enc, err := json.Marshal(x)
		if err != nil {
			return err
		}
		b.Write(enc)
	case string:
		return writeJSONString(b, x)
	default:
		enc, err := json.Marshal(x)
		if err != nil {
			return err
		}
		b.Write(enc)
	}
	return nil
}

// writeJSONString writes s as compact JSON without HTML escaping (the
// serde_json spelling the seed's events use).
func writeJSONString(b *bytes.Buffer, s string) error {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return err
	}
	b.Write(bytes.TrimSuffix(tmp.Bytes(), []byte("\n")))
	return nil
}
