/*
Copyright 2026 The tenon Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package jsontext

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Marshal returns the JSON encoding of v exactly as encoding/json's Marshal writes it: object
// members in the order of their keys, strings escaped as it escapes them (HTML's <, > and &
// included), numbers in its notation; and an error where it returns one (a NaN or an
// infinity). It is what request bodies are written with: JSON values (map[string]any, []any,
// string, bool, nil, the number types and json.Number) are written without encoding/json's
// reflection, its sorting through reflect.Value and the second pass it makes over each
// json.Marshaler's output. Any other type, where it is found, is handed to encoding/json.
func Marshal(v any) ([]byte, error) {
	return AppendJSON(make([]byte, 0, 512), v)
}

// AppendJSON appends the encoding [Marshal] returns for v to buf.
func AppendJSON(buf []byte, v any) ([]byte, error) {
	return appendJSON(buf, v, 0)
}

// deepest is the depth below which values are handed to encoding/json, which then looks for a
// cycle (an object that holds itself) and reports it, as it does from a depth of 1,000.
const deepest = 1000

// appendJSON is AppendJSON for v, depth objects and lists deep.
func appendJSON(buf []byte, v any, depth int) ([]byte, error) {
	if depth > deepest {
		return appendEncodingJSON(buf, v)
	}
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return append(buf, "null"...), nil
		}
		return appendJSONObject(buf, x, depth)
	case []any:
		if x == nil {
			return append(buf, "null"...), nil
		}
		return appendJSONList(buf, x, depth)
	case string:
		return AppendJSONString(buf, x), nil
	case bool:
		return strconv.AppendBool(buf, x), nil
	case nil:
		return append(buf, "null"...), nil
	}
	return appendJSONNumber(buf, v)
}

// appendJSONList appends the elements of l, depth objects and lists deep.
func appendJSONList(buf []byte, l []any, depth int) ([]byte, error) {
	buf = append(buf, '[')
	for i, e := range l {
		if i > 0 {
			buf = append(buf, ',')
		}
		var err error
		if buf, err = appendJSON(buf, e, depth+1); err != nil {
			return buf, err
		}
	}
	return append(buf, ']'), nil
}

// appendJSONNumber appends v, a number of the types the unstructured form holds, or anything
// else as encoding/json encodes it.
func appendJSONNumber(buf []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case int64:
		return strconv.AppendInt(buf, x, 10), nil
	case int:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case float64:
		return appendJSONFloat(buf, x, 64)
	case float32:
		return appendJSONFloat(buf, float64(x), 32)
	}
	// Other number types, json.Number, and types JSON has no place for.
	return appendEncodingJSON(buf, v)
}

// appendEncodingJSON appends encoding/json's own encoding of v, which is the same embedded as
// alone: it compacts what it embeds.
func appendEncodingJSON(buf []byte, v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return buf, err
	}
	return append(buf, data...), nil
}

// appendJSONObject appends o's members in the order of their keys, depth objects and lists deep.
func appendJSONObject(buf []byte, o map[string]any, depth int) ([]byte, error) {
	var fixed [16]string
	keys := fixed[:0]
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	buf = append(buf, '{')
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(AppendJSONString(buf, k), ':')
		var err error
		if buf, err = appendJSON(buf, o[k], depth+1); err != nil {
			return buf, err
		}
	}
	return append(buf, '}'), nil
}

// appendJSONFloat appends f, of the given bits, in encoding/json's notation: the shortest
// decimal that reads back as f, in exponent form below 1e-6 and from 1e21 on.
func appendJSONFloat(buf []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return buf, &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, bits)}
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	start := len(buf)
	buf = strconv.AppendFloat(buf, f, format, -1, bits)
	if format == 'e' {
		// An exponent of one digit is written with one: e-9, not e-09.
		if n := len(buf) - start; n >= 4 && buf[len(buf)-4] == 'e' && buf[len(buf)-3] == '-' && buf[len(buf)-2] == '0' {
			buf[len(buf)-2] = buf[len(buf)-1]
			buf = buf[:len(buf)-1]
		}
	}
	return buf, nil
}

// hexDigits are the digits of a \u escape.
const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string, escaped as encoding/json escapes it: quotes,
// backslashes and control characters, HTML's <, > and &, U+2028 and U+2029, and each byte that
// is not UTF-8 as U+FFFD.
func AppendJSONString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			buf = appendEscapedByte(append(buf, s[start:i]...), c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			buf = append(append(buf, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			buf = append(append(buf, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// appendEscapedByte appends the escape of c, an ASCII byte a JSON string does not hold as it is.
func appendEscapedByte(buf []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(buf, '\\', c)
	case '\b':
		return append(buf, '\\', 'b')
	case '\f':
		return append(buf, '\\', 'f')
	case '\n':
		return append(buf, '\\', 'n')
	case '\r':
		return append(buf, '\\', 'r')
	case '\t':
		return append(buf, '\\', 't')
	}
	return append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}
