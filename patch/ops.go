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

package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// op is one operation of a JSON Patch (RFC 6902). The helper sends JSON Patches rather than
// merge patches because a JSON Patch can change one element of a list, guarded by a test of what
// that element is, where a merge patch must replace the whole list; and because the API server
// applies a patch to the object as it is when the request arrives, retrying internally on its own
// conflicts, so unguarded operations never fail because of someone else's write.
type op struct {
	kind  string // add, remove, replace or test
	path  string // a JSON pointer
	value any    // unused for remove
}

// MarshalJSON encodes the operation as RFC 6902 says.
func (o op) MarshalJSON() ([]byte, error) {
	if o.kind == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{o.kind, o.path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{o.kind, o.path, o.value})
}

var (
	// errTestFailed is returned by applyOps when a test operation does not hold.
	errTestFailed = errors.New("test failed")
	// errMissing is returned by applyOps when a path an operation needs does not exist.
	errMissing = errors.New("path does not exist")
)

// applyOps applies ops to doc, in place, as the API server would, and returns the result. The
// helper uses it to find out whether a rejected patch was rejected because its guards no longer
// hold (a conflict) or for another reason; tests use it to check the patches the helper computes.
func applyOps(doc any, ops []op) (any, error) {
	var err error
	for _, o := range ops {
		doc, err = applyOp(doc, splitPointer(o.path), o)
		if err != nil {
			return doc, fmt.Errorf("failed to apply %s %s: %w", o.kind, o.path, err)
		}
	}
	return doc, nil
}

// applyOp applies o at the location tokens in doc and returns the new doc.
func applyOp(doc any, tokens []string, o op) (any, error) {
	if len(tokens) == 0 {
		switch o.kind {
		case "test":
			if !jsonEqual(doc, o.value) {
				return doc, errTestFailed
			}
			return doc, nil
		case "add", "replace":
			return deepCopy(o.value), nil
		}
		return doc, fmt.Errorf("cannot %s the whole document", o.kind)
	}
	tok, rest := tokens[0], tokens[1:]
	switch c := doc.(type) {
	case map[string]any:
		child, ok := c[tok]
		if len(rest) > 0 {
			if !ok {
				return doc, errMissing
			}
			v, err := applyOp(child, rest, o)
			c[tok] = v
			return c, err
		}
		switch o.kind {
		case "test":
			if !ok || !jsonEqual(child, o.value) {
				return doc, errTestFailed
			}
		case "add":
			c[tok] = deepCopy(o.value)
		case "replace":
			if !ok {
				return doc, errMissing
			}
			c[tok] = deepCopy(o.value)
		case "remove":
			if !ok {
				return doc, errMissing
			}
			delete(c, tok)
		default:
			return doc, fmt.Errorf("unknown operation %q", o.kind)
		}
		return c, nil
	case []any:
		i, err := index(tok, len(c), len(rest) == 0 && o.kind == "add")
		if err != nil {
			return doc, err
		}
		if len(rest) > 0 {
			v, err := applyOp(c[i], rest, o)
			c[i] = v
			return c, err
		}
		switch o.kind {
		case "test":
			if !jsonEqual(c[i], o.value) {
				return doc, errTestFailed
			}
			return c, nil
		case "add":
			out := make([]any, 0, len(c)+1)
			out = append(out, c[:i]...)
			out = append(out, deepCopy(o.value))
			return append(out, c[i:]...), nil
		case "replace":
			c[i] = deepCopy(o.value)
			return c, nil
		case "remove":
			return append(c[:i:i], c[i+1:]...), nil
		}
		return doc, fmt.Errorf("unknown operation %q", o.kind)
	}
	return doc, errMissing
}

// index parses a JSON pointer token that addresses an element of a list of length n. When
// inserting, n itself and "-" (the end) are valid too.
func index(tok string, n int, insert bool) (int, error) {
	if insert && tok == "-" {
		return n, nil
	}
	i, err := strconv.Atoi(tok)
	limit := n
	if insert {
		limit = n + 1
	}
	if err != nil || i < 0 || i >= limit || (tok != "0" && tok[0] == '0') {
		return 0, errMissing
	}
	return i, nil
}
