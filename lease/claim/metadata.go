package claim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strings"

	"github.com/leasewrap/leasewrap/internal/pyyaml"
)

// Metadata is a claim's ordered mapping (a rewrite must not reorder): nil, bool,
// *big.Int, float64, string, []any or Metadata values.
type Metadata = pyyaml.Mapping

// Field is one key/value pair of a Metadata mapping.
type Field = pyyaml.Field

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
			out[i] = Field{Key: f.Key, Value: nv}
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
			out = append(out, Field{Key: k, Value: nv})
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

// numberValue turns a JSON number into *big.Int (no fraction/exponent) or float64.
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

// ParseMetadataJSON decodes a JSON object into Metadata in key order (a repeated
// key keeps its first position and last value, like Python's json).
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
	var b pyyaml.Builder // a repeated key: first position, last value
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
		b.Set(k, v)
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, err
	}
	return b.Mapping(), nil
}

// decodeValue decodes the next value; depth counts the record's root as one.
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
