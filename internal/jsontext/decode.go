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
	"errors"
	"strconv"
)

// Decode returns the JSON value data holds as encoding/json's Unmarshal into an `any` returns
// it: map[string]any, []any, string, float64, bool or nil, the last of duplicate keys winning;
// an error where Unmarshal returns one (data not one JSON value, a number out of float64's
// range, nesting deeper than 10,000). It is what managedFields' field sets and their keys are
// read with, without Unmarshal's reflection and the second pass it makes to validate: a string
// that is all printable ASCII is taken as it is, and any other (escapes, control characters,
// other encodings) is decoded by encoding/json itself, so that it is rewritten as Unmarshal
// rewrites it.
func Decode[T ~string | ~[]byte](data T) (any, error) {
	d := decoder[T]{data: data}
	d.space()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.at < len(d.data) {
		return nil, d.unexpected()
	}
	return v, nil
}

// DecodeObject returns the JSON object data holds as encoding/json's Unmarshal into a
// map[string]any returns it: nil for null, and an error for a value that is not an object.
func DecodeObject[T ~string | ~[]byte](data T) (map[string]any, error) {
	v, err := Decode(data)
	if err != nil {
		return nil, err
	}
	switch o := v.(type) {
	case map[string]any:
		return o, nil
	case nil:
		return nil, nil
	}
	return nil, errors.New("json: not an object")
}

// maxDepth is encoding/json's limit on nesting.
const maxDepth = 10000

// decoder reads one JSON value from data, from at.
type decoder[T ~string | ~[]byte] struct {
	data T
	at   int
}

// space skips white space.
func (d *decoder[T]) space() {
	for d.at < len(d.data) {
		switch d.data[d.at] {
		case ' ', '\t', '\n', '\r':
			d.at++
		default:
			return
		}
	}
}

// unexpected returns the error for the byte at d.at, or for the end of data.
func (d *decoder[T]) unexpected() error {
	if d.at >= len(d.data) {
		return errors.New("json: unexpected end of input")
	}
	return errors.New("json: invalid character " + strconv.QuoteRune(rune(d.data[d.at])) + " at offset " + strconv.Itoa(d.at))
}

// value reads the value at d.at, which depth values enclose.
func (d *decoder[T]) value(depth int) (any, error) {
	if d.at >= len(d.data) {
		return nil, d.unexpected()
	}
	switch c := d.data[d.at]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.list(depth + 1)
	case c == '"':
		return d.string()
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, d.unexpected()
}

// literal reads word, which must be at d.at.
func (d *decoder[T]) literal(word string) error {
	if len(d.data)-d.at < len(word) || string(d.data[d.at:d.at+len(word)]) != word {
		for i := 0; i < len(word) && d.at < len(d.data) && d.data[d.at] == word[i]; i++ {
			d.at++
		}
		return d.unexpected()
	}
	d.at += len(word)
	return nil
}

// object reads the object at d.at, the depth-th value enclosing what it holds.
func (d *decoder[T]) object(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("json: exceeded max depth")
	}
	d.at++ // {
	o := map[string]any{}
	d.space()
	if d.at < len(d.data) && d.data[d.at] == '}' {
		d.at++
		return o, nil
	}
	for {
		if d.at >= len(d.data) || d.data[d.at] != '"' {
			return nil, d.unexpected()
		}
		k, err := d.string()
		if err != nil {
			return nil, err
		}
		d.space()
		if d.at >= len(d.data) || d.data[d.at] != ':' {
			return nil, d.unexpected()
		}
		d.at++
		d.space()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		o[k] = v
		if end, err := d.separator('}'); end || err != nil {
			return o, err
		}
	}
}

// list reads the list at d.at, the depth-th value enclosing what it holds.
func (d *decoder[T]) list(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("json: exceeded max depth")
	}
	d.at++ // [
	l := []any{}
	d.space()
	if d.at < len(d.data) && d.data[d.at] == ']' {
		d.at++
		return l, nil
	}
	for {
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		l = append(l, v)
		if end, err := d.separator(']'); end || err != nil {
			return l, err
		}
	}
}

// separator reads what follows a member of an object or an element of a list: a comma, and
// end is false; or closing, the object's or list's end, and end is true.
func (d *decoder[T]) separator(closing byte) (end bool, err error) {
	d.space()
	if d.at >= len(d.data) {
		return false, d.unexpected()
	}
	switch d.data[d.at] {
	case ',':
		d.at++
		d.space()
		return false, nil
	case closing:
		d.at++
		return true, nil
	}
	return false, d.unexpected()
}

// string reads the string at d.at, which starts with its opening quote.
func (d *decoder[T]) string() (string, error) {
	start := d.at
	d.at++
	plain := true
	for d.at < len(d.data) {
		switch c := d.data[d.at]; {
		case c == '"':
			d.at++
			if plain {
				return string(d.data[start+1 : d.at-1]), nil
			}
			// Escapes, control characters (which make it invalid) and bytes beyond ASCII
			// (which encoding/json checks and rewrites when they are not UTF-8): its own
			// reading of the token.
			var s string
			if err := json.Unmarshal([]byte(string(d.data[start:d.at])), &s); err != nil {
				return "", err
			}
			return s, nil
		case c == '\\':
			plain = false
			d.at++ // the escaped byte, whatever it is, is not the closing quote
		case c < 0x20 || c >= 0x80:
			plain = false
		}
		d.at++
	}
	return "", d.unexpected()
}

// number reads the number at d.at, in JSON's grammar, as a float64.
func (d *decoder[T]) number() (any, error) {
	start := d.at
	if !d.integer() || !d.fraction() || !d.exponent() {
		return nil, d.unexpected()
	}
	f, err := strconv.ParseFloat(string(d.data[start:d.at]), 64)
	if err != nil {
		return nil, errors.New("json: cannot read number " + string(d.data[start:d.at]) + " as a float64")
	}
	return f, nil
}

// integer reads a number's sign and integer part, and reports whether they are JSON's.
func (d *decoder[T]) integer() bool {
	if d.data[d.at] == '-' {
		d.at++
	}
	switch {
	case d.at < len(d.data) && d.data[d.at] == '0':
		d.at++
		return true
	case d.at < len(d.data) && d.data[d.at] >= '1' && d.data[d.at] <= '9':
		return d.digits()
	}
	return false
}

// fraction reads a number's fraction, if it has one, and reports whether it is JSON's.
func (d *decoder[T]) fraction() bool {
	if d.at < len(d.data) && d.data[d.at] == '.' {
		d.at++
		return d.digits()
	}
	return true
}

// exponent reads a number's exponent, if it has one, and reports whether it is JSON's.
func (d *decoder[T]) exponent() bool {
	if d.at < len(d.data) && (d.data[d.at] == 'e' || d.data[d.at] == 'E') {
		d.at++
		if d.at < len(d.data) && (d.data[d.at] == '+' || d.data[d.at] == '-') {
			d.at++
		}
		return d.digits()
	}
	return true
}

// digits reads one or more decimal digits, and reports whether there was one.
func (d *decoder[T]) digits() bool {
	start := d.at
	for d.at < len(d.data) && d.data[d.at] >= '0' && d.data[d.at] <= '9' {
		d.at++
	}
	return d.at > start
}
