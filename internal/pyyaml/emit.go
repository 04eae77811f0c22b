package pyyaml

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// PyYAML's emitter defaults.
const (
	bestIndent = 2
	bestWidth  = 80
)

// emitter is a port of the parts of PyYAML's Emitter (emitter.py) that
// safe_dump(sort_keys=False) of a record reaches.
type emitter struct {
	b          strings.Builder
	column     int
	whitespace bool
	indention  bool
	indent     int // -1 = None
	indents    []int
	flowLevel  int
}

// Dump renders root as yaml.safe_dump(root, sort_keys=False) does. A key
// PyYAML could not write as a simple key (empty, multi-line, 128+ characters)
// or a value of another type is an error.
func Dump(root Mapping) (out []byte, err error) {
	e := &emitter{whitespace: true, indention: true, indent: -1}
	defer func() {
		if r := recover(); r != nil {
			ee, ok := r.(emitError)
			if !ok {
				panic(r)
			}
			err = ee
		}
	}()
	if len(root) == 0 {
		e.flowCollection("{", "}")
	} else {
		e.blockMapping(root)
	}
	// expect_document_end: write_indent with the indent back at None (0).
	e.indent = 0
	e.writeIndent()
	return []byte(e.b.String()), nil
}

type emitError struct{ msg string }

func (e emitError) Error() string { return e.msg }

func (e *emitter) increaseIndent(flow, indentless bool) {
	e.indents = append(e.indents, e.indent)
	if e.indent < 0 {
		if flow {
			e.indent = bestIndent
		} else {
			e.indent = 0
		}
	} else if !indentless {
		e.indent += bestIndent
	}
}

func (e *emitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

// node emits a value in block context (expect_node).
func (e *emitter) node(v any, mappingCtx bool) {
	switch x := v.(type) {
	case Mapping:
		if len(x) == 0 {
			e.flowCollection("{", "}")
			return
		}
		e.blockMapping(x)
	case []any:
		if len(x) == 0 {
			e.flowCollection("[", "]")
			return
		}
		e.blockSequence(x, mappingCtx)
	default:
		text, isStr := scalarText(v)
		e.increaseIndent(true, false)
		e.scalar(text, isStr, false)
		e.popIndent()
	}
}

func (e *emitter) flowCollection(open, close string) {
	e.writeIndicator(open, true, true, false)
	e.flowLevel++
	e.increaseIndent(true, false)
	e.popIndent()
	e.flowLevel--
	e.writeIndicator(close, false, false, false)
}

func (e *emitter) blockMapping(m Mapping) {
	e.increaseIndent(false, false)
	for _, f := range m {
		e.writeIndent()
		if !simpleKey(f.Key) {
			panic(emitError{fmt.Sprintf("key %q cannot be written as a simple YAML key (empty, multi-line or 128+ characters)", f.Key)})
		}
		e.increaseIndent(true, false)
		e.scalar(f.Key, true, true)
		e.popIndent()
		e.writeIndicator(":", false, false, false)
		e.node(f.Value, true)
	}
	e.popIndent()
}

func (e *emitter) blockSequence(list []any, mappingCtx bool) {
	e.increaseIndent(false, mappingCtx && !e.indention)
	for _, item := range list {
		e.writeIndent()
		e.writeIndicator("-", true, false, true)
		e.node(item, false)
	}
	e.popIndent()
}

// simpleKey mirrors check_simple_key for a string key.
func simpleKey(k string) bool {
	a := analyzeScalar([]rune(k))
	return len([]rune(k)) < 128 && !a.empty && !a.multiline
}

// scalarText spells a non-collection value as PyYAML's SafeRepresenter.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "null", false
	case bool:
		if x {
			return "true", false
		}
		return "false", false
	case *big.Int:
		return x.String(), false
	case int:
		return strconv.Itoa(x), false
	case int64:
		return strconv.FormatInt(x, 10), false
	case float64:
		return pyFloatRepr(x), false
	case string:
		return x, true
	}
	panic(emitError{fmt.Sprintf("cannot write a value of type %T as YAML", v)})
}

// scalar chooses the style (choose_scalar_style) and writes the scalar.
func (e *emitter) scalar(text string, isStr, simpleKeyCtx bool) {
	r := []rune(text)
	a := analyzeScalar(r)
	implicit := true // non-strings are written in their own resolvable form
	if isStr {
		implicit = resolvePlain(text) == tagStr
	}
	style := byte('"')
	switch {
	case implicit && !(simpleKeyCtx && (a.empty || a.multiline)) && a.allowBlockPlain && e.flowLevel == 0:
		style = 0
	case a.allowSingleQuoted && !(simpleKeyCtx && a.multiline):
		style = '\''
	}
	split := !simpleKeyCtx
	switch style {
	case 0:
		e.writePlain(r, split)
	case '\'':
		e.writeSingleQuoted(r, split)
	default:
		e.writeDoubleQuoted(r, split)
	}
}

type analysis struct {
	empty, multiline                   bool
	allowBlockPlain, allowSingleQuoted bool
}

func isBreak(ch rune) bool { return ch == '\n' || ch == '\u0085' || ch == '\u2028' || ch == '\u2029' }

func isWS(ch rune) bool {
	return ch == 0 || ch == ' ' || ch == '\t' || ch == '\r' || isBreak(ch)
}

// analyzeScalar is PyYAML's analyze_scalar, reduced to a record's needs.
func analyzeScalar(s []rune) analysis {
	if len(s) == 0 {
		return analysis{empty: true, allowBlockPlain: true, allowSingleQuoted: true}
	}
	var blockInd, lineBreaks, special bool
	var leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	str := string(s)
	if strings.HasPrefix(str, "---") || strings.HasPrefix(str, "...") {
		blockInd = true
	}
	precededByWS := true
	followedByWS := len(s) == 1 || isWS(s[1])
	prevSpace, prevBreak := false, false
	for i, ch := range s {
		if i == 0 {
			if strings.ContainsRune("#,[]{}&*!|>'\"%@`", ch) {
				blockInd = true
			}
			if (ch == '?' || ch == ':') && followedByWS {
				blockInd = true
			}
			if ch == '-' && followedByWS {
				blockInd = true
			}
		} else {
			if ch == ':' && followedByWS {
				blockInd = true
			}
			if ch == '#' && precededByWS {
				blockInd = true
			}
		}
		if isBreak(ch) {
			lineBreaks = true
		}
		if !(ch == '\n' || (ch >= 0x20 && ch <= 0x7E)) {
			special = true // allow_unicode is False: every such char is special
		}
		switch {
		case ch == ' ':
			if i == 0 {
				leadingSpace = true
			}
			if i == len(s)-1 {
				trailingSpace = true
			}
			if prevBreak {
				breakSpace = true
			}
			prevSpace, prevBreak = true, false
		case isBreak(ch):
			if i == 0 {
				leadingBreak = true
			}
			if i == len(s)-1 {
				trailingBreak = true
			}
			if prevSpace {
				spaceBreak = true
			}
			prevSpace, prevBreak = false, true
		default:
			prevSpace, prevBreak = false, false
		}
		precededByWS = isWS(ch)
		followedByWS = i+2 >= len(s) || isWS(s[i+2])
	}
	a := analysis{multiline: lineBreaks, allowBlockPlain: true, allowSingleQuoted: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak {
		a.allowBlockPlain = false
	}
	if breakSpace {
		a.allowBlockPlain, a.allowSingleQuoted = false, false
	}
	if spaceBreak || special {
		a.allowBlockPlain, a.allowSingleQuoted = false, false
	}
	if lineBreaks || blockInd {
		a.allowBlockPlain = false
	}
	return a
}

func (e *emitter) write(s string) {
	e.column += len([]rune(s))
	e.b.WriteString(s)
}

func (e *emitter) writeIndicator(ind string, needWS, whitespace, indention bool) {
	data := ind
	if !e.whitespace && needWS {
		data = " " + ind
	}
	e.whitespace = whitespace
	e.indention = e.indention && indention
	e.write(data)
}

func (e *emitter) writeIndent() {
	indent := max(e.indent, 0)
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.writeLineBreak("\n")
	}
	if e.column < indent {
		e.whitespace = true
		e.write(strings.Repeat(" ", indent-e.column))
	}
}

func (e *emitter) writeLineBreak(data string) {
	e.whitespace = true
	e.indention = true
	e.column = 0
	e.b.WriteString(data)
}

// writeBreaks writes line breaks inside a plain or single-quoted scalar as
// PyYAML does: a run starting with "\n" gets one more (one would fold to a space).
func (e *emitter) writeBreaks(breaks []rune) {
	if breaks[0] == '\n' {
		e.writeLineBreak("\n")
	}
	for _, br := range breaks {
		e.writeLineBreak(string(br))
	}
	e.writeIndent()
}

func (e *emitter) writePlain(text []rune, split bool) {
	if len(text) == 0 {
		return
	}
	if !e.whitespace {
		e.write(" ")
	}
	e.whitespace = false
	e.indention = false
	spaces, breaks := false, false
	start, end := 0, 0
	for end <= len(text) {
		var ch rune = -1
		if end < len(text) {
			ch = text[end]
		}
		switch {
		case spaces:
			if ch != ' ' {
				if start+1 == end && e.column > bestWidth && split {
					e.writeIndent()
					e.whitespace = false
					e.indention = false
				} else {
					e.write(string(text[start:end]))
				}
				start = end
			}
		case breaks:
			if ch == -1 || !isBreak(ch) {
				e.writeBreaks(text[start:end])
				e.whitespace = false
				e.indention = false
				start = end
			}
		default:
			if ch == -1 || ch == ' ' || isBreak(ch) {
				e.write(string(text[start:end]))
				start = end
			}
		}
		if ch != -1 {
			spaces = ch == ' '
			breaks = isBreak(ch)
		}
		end++
	}
}

func (e *emitter) writeSingleQuoted(text []rune, split bool) {
	e.writeIndicator("'", true, false, false)
	spaces, breaks := false, false
	start, end := 0, 0
	for end <= len(text) {
		var ch rune = -1
		if end < len(text) {
			ch = text[end]
		}
		switch {
		case spaces:
			if ch == -1 || ch != ' ' {
				if start+1 == end && e.column > bestWidth && split && start != 0 && end != len(text) {
					e.writeIndent()
				} else {
					e.write(string(text[start:end]))
				}
				start = end
			}
		case breaks:
			if ch == -1 || !isBreak(ch) {
				e.writeBreaks(text[start:end])
				start = end
			}
		default:
			if ch == -1 || ch == ' ' || isBreak(ch) || ch == '\'' {
				if start < end {
					e.write(string(text[start:end]))
					start = end
				}
			}
		}
		if ch == '\'' {
			e.write("''")
			start = end + 1
		}
		if ch != -1 {
			spaces = ch == ' '
			breaks = isBreak(ch)
		}
		end++
	}
	e.writeIndicator("'", false, false, false)
}

var escapeReplacements = map[rune]string{
	0: "0", 0x07: "a", 0x08: "b", 0x09: "t", 0x0A: "n", 0x0B: "v", 0x0C: "f",
	0x0D: "r", 0x1B: "e", '"': "\"", '\\': "\\", 0x85: "N", 0xA0: "_",
	0x2028: "L", 0x2029: "P",
}

func (e *emitter) writeDoubleQuoted(text []rune, split bool) {
	e.writeIndicator("\"", true, false, false)
	start, end := 0, 0
	for end <= len(text) {
		var ch rune = -1
		if end < len(text) {
			ch = text[end]
		}
		if ch == -1 || ch == '"' || ch == '\\' || ch == 0x85 || ch == 0x2028 || ch == 0x2029 || ch == 0xFEFF ||
			!(ch >= 0x20 && ch <= 0x7E) {
			if start < end {
				e.write(string(text[start:end]))
				start = end
			}
			if ch != -1 {
				var data string
				if rep, ok := escapeReplacements[ch]; ok {
					data = "\\" + rep
				} else if ch <= 0xFF {
					data = fmt.Sprintf("\\x%02X", ch)
				} else if ch <= 0xFFFF {
					data = fmt.Sprintf("\\u%04X", ch)
				} else {
					data = fmt.Sprintf("\\U%08X", ch)
				}
				e.write(data)
				start = end + 1
			}
		}
		if 0 < end && end < len(text)-1 && (ch == ' ' || start >= end) &&
			e.column+(end-start) > bestWidth && split {
			data := pySlice(text, start, end) + "\\"
			if start < end {
				start = end
			}
			e.write(data)
			e.writeIndent()
			e.whitespace = false
			e.indention = false
			if text[start] == ' ' {
				e.write("\\")
			}
		}
		end++
	}
	e.writeIndicator("\"", false, false, false)
}

// pySlice is Python's text[start:end]: empty when start >= end.
func pySlice(text []rune, start, end int) string {
	if start >= end {
		return ""
	}
	return string(text[start:end])
}
