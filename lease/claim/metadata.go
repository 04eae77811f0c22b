package claim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strings"
)

// Metadata is a claim's opaque metadata: an ORDERED mapping, because the
// Python writer keeps a dict's insertion order and a peer rewriting the
// record must not reorder it.
//
// Values are nil, bool, *big.Int (integers of any size), float64, string,
// []any of values, or Metadata.
type Metadata []Field

// Field is one key/value pair of a Metadata mapping.
type Field struct {
	Key   string
	Value any
}

// Get returns the value of key and whether it is present.
func (m Metadata) Get(key string) (any, bool) {
	for _, f := range m {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

func normalize(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string, *big.Int:
		return x, nil
	case Metadata:
		out := make(Metadata, len(x))
		for i, f := range x {
			nv, err := normalize(f.Value)
			if err != nil {
				return nil, err
			}
			out[i] = Field{f.Key, nv}
		}
		return out, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make(Metadata, 0, len(x))
		for _, k := range keys {
			nv, err := normalize(x[k])
			if err != nil {
				return nil, err
			}
			out = append(out, Field{k, nv})
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			nv, err := normalize(e)
			if err != nil {
				return nil, err
			}
			out[i] = nv
		}
		return out, nil
	case int:
		return big.NewInt(int64(x)), nil
	case int64:
		return big.NewInt(x), nil
	case int32:
		return big.NewInt(int64(x)), nil
	case uint64:
		return new(big.Int).SetUint64(x), nil
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case json.Number:
		return numberValue(string(x))
	}
	return nil, fmt.Errorf("%w: metadata value of type %T is not JSON-like", ErrInvalid, v)
}

// numberValue turns a JSON number literal into *big.Int (no fraction or
// exponent, as Python's json module does) or float64.
func numberValue(s string) (any, error) {
	if !strings.ContainsAny(s, ".eE") {
		n, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("%w: bad JSON number %q", ErrInvalid, s)
		}
		return n, nil
	}
	var f float64
	if err := json.Unmarshal([]byte(s), &f); err != nil {
		return nil, fmt.Errorf("%w: bad JSON number %q: %v", ErrInvalid, s, err)
	}
	return f, nil
}

// ParseMetadataJSON decodes a JSON object into Metadata, keeping the
// object's key order (a repeated key keeps its first position and its last
// value, as Python's json module does). Anything but an object is an error.
func ParseMetadataJSON(data []byte) (Metadata, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%w: metadata is not valid JSON: %v", ErrInvalid, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("%w: metadata must be a JSON object, have %s", ErrInvalid, describeToken(tok))
	}
	m, err := decodeObject(dec, 2)
	if errors.Is(err, errTooDeep) {
		return nil, fmt.Errorf("%w: metadata nests more than %d levels deep; claims nest at most %d levels (root included), the limit of the Rust peer's YAML reader",
			ErrInvalid, MaxNesting-1, MaxNesting)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: metadata is not valid JSON: %v", ErrInvalid, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: metadata has trailing data after the JSON object", ErrInvalid)
	}
	if _, err := marshalRecord(&Record{Key: "k", Holder: "h", Metadata: m}); err != nil {
		return nil, err
	}
	return m, nil
}

// errTooDeep stops decoding metadata nested deeper than a claim may be.
var errTooDeep = errors.New("too deep")

func describeToken(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", tok)
}

func decodeObject(dec *json.Decoder, depth int) (Metadata, error) {
	if depth > MaxNesting {
		return nil, errTooDeep
	}
	out := Metadata{}
	index := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key is not a string")
		}
		v, err := decodeValue(dec, depth)
		if err != nil {
			return nil, err
		}
		if i, ok := index[k]; ok {
			out[i].Value = v
		} else {
			index[k] = len(out)
			out = append(out, Field{k, v})
		}
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, err
	}
	return out, nil
}

// decodeValue decodes the value that follows in dec; depth is how deeply
// its enclosing collections nest in the claim (the record's root mapping
// counting as one).
func decodeValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return decodeObject(dec, depth+1)
		case '[':
			if depth+1 > MaxNesting {
				return nil, errTooDeep
			}
			list := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return list, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		return numberValue(string(t))
	default:
		return t, nil // string, bool, nil
	}
}

// MarshalJSON writes the mapping as a JSON object in its own order.
func (m Metadata) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSONValue(&b, m); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeJSONValue(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case Metadata:
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
