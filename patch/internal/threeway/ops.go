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

package threeway

import (
	"encoding/json"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/tenon-dev/tenon/internal/jsontext"
)

// Op is one operation of a JSON Patch (RFC 6902). The helper sends JSON Patches rather than
// merge patches because a JSON Patch can replace one element of a list, or a whole list, guarded
// by a test of what is there now, where a merge patch replaces lists blindly; and because the API
// server applies a patch to the object as it is when the request arrives, so operations that
// change only what this reconcile changed never fail because of someone else's write.
type Op struct {
	Kind  string // add, remove, replace or test
	Path  string // a JSON pointer
	Value any    // unused for remove
	// Guard marks a test of a value read from the snapshot or the latest object, as opposed to
	// the tests of identity (uid) and version (resourceVersion). When the object as read cannot
	// show a value exactly as the server holds it, a request is guarded by the resourceVersion
	// instead, and these tests are left out (see Request.Finish).
	Guard bool
}

// MarshalJSON encodes the operation as RFC 6902 says.
func (o Op) MarshalJSON() ([]byte, error) {
	return o.appendJSON(nil)
}

// Marshal returns the JSON Patch of ops, the bytes encoding/json writes for them, written
// without its reflection and the pass it makes over each MarshalJSON's output.
func Marshal(ops []Op) ([]byte, error) {
	if ops == nil {
		return []byte("null"), nil
	}
	buf := make([]byte, 0, 256)
	buf = append(buf, '[')
	for i, o := range ops {
		if i > 0 {
			buf = append(buf, ',')
		}
		var err error
		if buf, err = o.appendJSON(buf); err != nil {
			return nil, err
		}
	}
	return append(buf, ']'), nil
}

// appendJSON appends the operation's encoding to buf.
func (o Op) appendJSON(buf []byte) ([]byte, error) {
	buf = append(buf, `{"op":`...)
	buf = jsontext.AppendJSONString(buf, o.Kind)
	buf = append(buf, `,"path":`...)
	buf = jsontext.AppendJSONString(buf, o.Path)
	if o.Kind != "remove" {
		buf = append(buf, `,"value":`...)
		var err error
		if buf, err = jsontext.AppendJSON(buf, o.Value); err != nil {
			return nil, err
		}
	}
	return append(buf, '}'), nil
}

// Applies reports whether ops apply to doc: whether every test holds and every path they need
// exists. The helper asks it of the latest object after the API server rejected a patch, to tell
// a change by another writer (the patch no longer applies) from a value the object as read cannot
// show exactly (it still does).
func Applies(doc map[string]any, ops []Op) (ok bool) {
	defer func() {
		// json-patch v5.9 panics when it compares lists that hold null elements; such a patch
		// does not apply as far as the caller is concerned.
		if recover() != nil {
			ok = false
		}
	}()
	d, err := json.Marshal(doc)
	if err != nil {
		return false
	}
	p, err := Marshal(ops)
	if err != nil {
		return false
	}
	decoded, err := jsonpatch.DecodePatch(p)
	if err != nil {
		return false
	}
	_, err = decoded.Apply(d)
	return err == nil
}
