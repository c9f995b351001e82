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

package jsonvalue

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// AppendCanonical appends to buf an encoding of the JSON value v in which two values have the
// same bytes exactly when [Equal] finds them equal, and returns the extended buffer: object
// members in the order of their keys, numbers by value whatever their Go type (1 as an int64
// and 1.0 as a float64 are one number; a float32 is the number encoding/json writes for it),
// and every string, object and list prefixed by its
// length, so no two values run together. It is what a hash of a request body is taken over,
// without the reflection, the escaping and the allocations of encoding/json. A value of a type
// JSON has no place for is encoded with encoding/json, and an error is returned when that
// fails.
func AppendCanonical(buf []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case map[string]any:
		return appendObject(buf, x)
	case []any:
		return appendList(buf, x)
	case string:
		return appendString(append(buf, 's'), x), nil
	case bool:
		if x {
			return append(buf, 't'), nil
		}
		return append(buf, 'f'), nil
	case nil:
		return append(buf, 'n'), nil
	}
	return appendNumber(buf, v)
}

// appendObject appends the members of object o in the order of their keys, after their count.
func appendObject(buf []byte, o map[string]any) ([]byte, error) {
	buf = binary.AppendUvarint(append(buf, 'o'), uint64(len(o)))
	var fixed [16]string // most objects' keys, without an allocation
	keys := fixed[:0]
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		buf = appendString(buf, k)
		var err error
		if buf, err = AppendCanonical(buf, o[k]); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// appendList appends the elements of list l, after their count.
func appendList(buf []byte, l []any) ([]byte, error) {
	buf = binary.AppendUvarint(append(buf, 'a'), uint64(len(l)))
	for _, e := range l {
		var err error
		if buf, err = AppendCanonical(buf, e); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// appendNumber appends v, a number of any Go type, by its value: an integral one as an integer,
// any other as its float64 bits. A value that is not a number is appended as encoding/json
// encodes it.
func appendNumber(buf []byte, v any) ([]byte, error) {
	if i, ok := integer(v); ok {
		return binary.BigEndian.AppendUint64(append(buf, 'i'), uint64(i)), nil
	}
	if f, ok := number(v); ok {
		if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
			return binary.BigEndian.AppendUint64(append(buf, 'i'), uint64(int64(f))), nil
		}
		return binary.BigEndian.AppendUint64(append(buf, 'd'), math.Float64bits(f)), nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return buf, fmt.Errorf("cannot encode a %T: %w", v, err)
	}
	return appendString(append(buf, 'j'), string(data)), nil
}

// appendString appends s, prefixed by its length.
func appendString(buf []byte, s string) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
}
