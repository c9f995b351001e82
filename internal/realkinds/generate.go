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

package realkinds

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Value pools. Strings are drawn from pools that include values most schemas accept (DNS labels,
// reasons, label keys) and values many refuse (unicode, markup); the API server's refusal is an
// outcome the tests predict, not a failure of the generator.
var (
	poolNames        = []string{"a", "web", "db-1", "x", "cluster-queue", "example"}
	poolTexts        = []string{"", "a", "b", "ü", "日本語", "<b>&amp;</b>", "x & y", "seed", "Some message."}
	poolReasons      = []string{"Succeeded", "Failed", "InProgress", "A_b:c", "Ready", "NotReady"}
	poolCondTypes    = []string{"Ready", "Available", "Progressing", "Degraded", "Synced", "example.com/Custom"}
	poolCondStatuses = []string{"True", "False", "Unknown"}
	poolTimes        = []string{"2024-01-01T00:00:00Z", "2025-06-01T12:30:00Z", "2026-02-03T04:05:06Z", "2026-02-03T04:05:07Z"}
	poolQuantities   = []string{"1", "100m", "1000m", "0.5", "500m", "2", "1Gi", "1024Mi", "64Mi", "128974848"}
	poolDurations    = []string{"30s", "1m", "5m0s", "1h", "10m"}
	poolLabelKeys    = []string{"app", "tier", "a.example.com/x", "b.example.com/y"}
	poolLabelValues  = []string{"", "a", "b", "v1", "x.y-z"}
	poolAnnoKeys     = []string{"note", "a.example.com/x", "b.example.com/y"}
	poolMapKeys      = []string{"a", "b", "c.d", "e_f"}
	poolFinalizers   = []string{"a.example.com/x", "b.example.com/y", "c.example.com/z"}
	poolImages       = []string{"registry.example.com/app:1.0", "registry.example.com/app:1.1", "busybox:1.36"}
	poolURLs         = []string{"https://git.example.com/app.git", "https://git.example.com/other.git", "ssh://git@git.example.com/app.git"}
	poolGroups       = []string{"", "apps", "infrastructure.cluster.x-k8s.io", "cert-manager.io"}
	poolBase64       = []string{"c2VlZA==", "YQ==", ""}
	poolIPs          = []string{"10.0.0.1", "10.0.0.2", "192.168.1.10"}
	poolCIDRs        = []string{"10.0.0.0/16", "192.168.0.0/16"}
	poolIntegers     = []int64{0, 1, 2, 3, 5, 10}
	poolPorts        = []int64{80, 443, 8080, 9090}
	poolNumbers      = []any{0.5, 1.0, 2.0, int64(3)}
	poolUnknown      = []any{"x", int64(1), true, map[string]any{"x": int64(1)}, []any{"a", "b"}}
)

// Gen draws values of schemas and edits of objects, from one source of randomness: the same
// source gives the same values.
type Gen struct {
	R *rand.Rand
	// MaxDepth bounds the depth of new values: deeper than it, a new object has its required
	// fields only. Default 4.
	MaxDepth int
}

func (g *Gen) chance(p float64) bool { return g.R.Float64() < p }

func pick[T any](g *Gen, xs []T) T { return xs[g.R.IntN(len(xs))] }

func (g *Gen) maxDepth() int {
	if g.MaxDepth <= 0 {
		return 4
	}
	return g.MaxDepth
}

// Value returns a new value for a field named name (the last segment of its path) of schema s.
func (g *Gen) Value(s *Schema, name string, depth int) any {
	if s == nil {
		return pick(g, poolUnknown)
	}
	if v, ok := g.special(s); ok {
		return v
	}
	switch s.Type {
	case "string":
		return g.text(s, name)
	case "integer":
		return g.integer(s, name)
	case "number":
		return pick(g, poolNumbers)
	case "boolean":
		return g.chance(0.5)
	case "array":
		return g.list(s, name, depth)
	case "object":
		return g.objectOf(s, name, depth)
	}
	if s.PreserveUnknown {
		return pick(g, poolUnknown)
	}
	return pick(g, poolTexts)
}

// special returns a value for a schema whose enum or format decides its values, whatever its
// type: ok is false for any other.
func (g *Gen) special(s *Schema) (any, bool) {
	if len(s.Enum) > 0 {
		return s.Enum[g.R.IntN(len(s.Enum))], true
	}
	switch {
	case s.IsQuantity():
		return pick(g, poolQuantities), true
	case s.IsTime():
		return pick(g, poolTimes), true
	case s.IntOrString:
		if g.chance(0.5) {
			return pick(g, poolPorts), true
		}
		return pick(g, []string{"http", "25%", "50%", "1"}), true
	case s.EmbeddedResource:
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": pick(g, poolNames)}}, true
	}
	return nil, false
}

// list returns a new list of list schema s: one or two elements, or its minimum.
func (g *Gen) list(s *Schema, name string, depth int) []any {
	out := []any{}
	n := 1 + g.R.IntN(2)
	if s.MinItems != nil && int(*s.MinItems) > n {
		n = int(*s.MinItems)
	}
	for range n {
		out = g.addElement(s, name, out, depth+1)
	}
	return out
}

// objectOf returns a new value of object schema s: a map, a struct, or an object of unknown
// fields.
func (g *Gen) objectOf(s *Schema, name string, depth int) map[string]any {
	if len(s.Properties) > 0 {
		return g.object(s, depth)
	}
	if s.Additional != nil {
		out := map[string]any{}
		for range 1 + g.R.IntN(2) {
			out[g.mapKey(name)] = g.Value(s.Additional, name, depth+1)
		}
		return out
	}
	if s.PreserveUnknown {
		return map[string]any{"x": pick(g, poolUnknown)}
	}
	return map[string]any{}
}

// object returns a new object of struct schema s: its required fields, and some others while
// depth allows.
func (g *Gen) object(s *Schema, depth int) map[string]any {
	out := map[string]any{}
	for _, n := range s.Required {
		out[n] = g.Value(s.Properties[n], n, depth+1)
	}
	if depth >= g.maxDepth() {
		return out
	}
	names := s.Names()
	for range g.R.IntN(3) {
		n := pick(g, names)
		if _, ok := out[n]; !ok {
			out[n] = g.Value(s.Properties[n], n, depth+1)
		}
	}
	return out
}

// text returns a string for field name of schema s: from the pool its name suggests, then
// checked against the schema's pattern and length where a pool value fits.
func (g *Gen) text(s *Schema, name string) any {
	pool := poolFor(s, name)
	if v, ok := g.matching(s, pool); ok {
		return v
	}
	v := pick(g, pool)
	if s.MaxLength != nil && int64(len(v)) > *s.MaxLength && g.chance(0.9) {
		v = v[:*s.MaxLength]
	}
	return v
}

// poolsByName are the pools of string fields known by their whole name, lower-cased.
var poolsByName = map[string][]string{
	"type":         poolCondTypes,
	"status":       poolCondStatuses,
	"reason":       poolReasons,
	"message":      poolTexts,
	"image":        poolImages,
	"url":          poolURLs,
	"interval":     poolDurations,
	"timeout":      poolDurations,
	"apiversion":   {"v1", "apps/v1", "infrastructure.cluster.x-k8s.io/v1beta2"},
	"apigroup":     poolGroups,
	"group":        poolGroups,
	"kind":         {"ConfigMap", "Deployment", "DockerMachine", "Issuer"},
	"name":         poolNames,
	"namespace":    poolNames,
	"clusterqueue": poolNames,
	"key":          poolNames,
}

// poolFor returns the pool of values for string field name of schema s: by its format, its
// whole name, or a part of its name.
func poolFor(s *Schema, name string) []string {
	if s.Format == "byte" {
		return poolBase64
	}
	lower := strings.ToLower(name)
	if pool, ok := poolsByName[lower]; ok {
		return pool
	}
	switch {
	case strings.HasSuffix(lower, "conditiontype"):
		return poolCondTypes
	case strings.HasSuffix(lower, "url"):
		return poolURLs
	case strings.HasSuffix(lower, "duration"):
		return poolDurations
	case strings.Contains(lower, "ip") && !strings.Contains(lower, "policy") && !strings.Contains(lower, "description"):
		return poolIPs
	case strings.Contains(lower, "cidr"):
		return poolCIDRs
	case strings.HasSuffix(lower, "name") || strings.HasSuffix(lower, "ref"):
		return poolNames
	}
	return poolTexts
}

// matching returns, most of the time, a value of pool (or of the names and texts) that matches
// s's pattern and length; ok is false when s has no pattern or nothing fits.
func (g *Gen) matching(s *Schema, pool []string) (string, bool) {
	if s.Pattern == "" {
		return "", false
	}
	re, err := regexp.Compile(s.Pattern)
	if err != nil {
		return "", false
	}
	var fits []string
	for _, p := range slices.Concat(pool, poolNames, poolTexts) {
		if re.MatchString(p) && fitsLength(s, p) {
			fits = append(fits, p)
		}
	}
	if len(fits) > 0 && g.chance(0.9) {
		return pick(g, fits), true
	}
	return "", false
}

func fitsLength(s *Schema, v string) bool {
	return (s.MinLength == nil || int64(len(v)) >= *s.MinLength) && (s.MaxLength == nil || int64(len(v)) <= *s.MaxLength)
}

func (g *Gen) integer(s *Schema, name string) any {
	if name == "nodePort" || name == "healthCheckNodePort" {
		// A Service's node ports are the allocator's: a dry run checks an explicit one neither
		// against the allocator's range nor against other Services, so only 0 ("allocate one")
		// has an outcome a dry run predicts (TENON_REAL_SEED=112736011: 9090 refused as out of
		// range by the write, accepted by its dry run).
		return int64(0)
	}
	pool := poolIntegers
	if strings.Contains(strings.ToLower(name), "port") {
		pool = poolPorts
	}
	var fits []int64
	for _, n := range pool {
		if (s.Minimum == nil || float64(n) >= *s.Minimum) && (s.Maximum == nil || float64(n) <= *s.Maximum) {
			fits = append(fits, n)
		}
	}
	if len(fits) == 0 || g.chance(0.05) {
		return pick(g, pool)
	}
	return pick(g, fits)
}

// mapKey returns a key for a new entry of the map field name.
func (g *Gen) mapKey(name string) string {
	switch strings.ToLower(name) {
	case "labels", "matchlabels", "selector", "nodeselector":
		return pick(g, poolLabelKeys)
	case "annotations":
		return pick(g, poolAnnoKeys)
	}
	return pick(g, poolMapKeys)
}

// addElement returns l with one more element of list schema s, unique by its keys where the
// list type asks for that (retried a few times; the list is returned as it is when no new
// element fits).
func (g *Gen) addElement(s *Schema, name string, l []any, depth int) []any {
	for range 8 {
		e := g.Value(s.Items, singular(name), depth)
		if s.ListType == "map" || s.PatchMergeKey != "" {
			e = g.withKeys(s, e)
		}
		if !g.unique(s, l, e) {
			continue
		}
		i := len(l)
		if g.chance(0.3) {
			i = g.R.IntN(len(l) + 1)
		}
		return slices.Insert(slices.Clone(l), i, e)
	}
	return l
}

// withKeys makes sure e, an element of a list of type map, has every key field.
func (g *Gen) withKeys(s *Schema, e any) any {
	m, ok := e.(map[string]any)
	if !ok || s.Items == nil {
		return e
	}
	for _, k := range keysOf(s) {
		if _, ok := m[k]; !ok {
			m[k] = g.Value(s.Items.Properties[k], k, g.maxDepth())
		}
	}
	return m
}

// keysOf returns the keys of list s's elements: its list-map keys, or its patch merge key.
func keysOf(s *Schema) []string {
	if len(s.ListMapKeys) > 0 {
		return s.ListMapKeys
	}
	if s.PatchMergeKey != "" {
		return []string{s.PatchMergeKey}
	}
	return nil
}

// unique reports whether e may join l: no element with its keys (list type map), or equal to
// it (set).
func (g *Gen) unique(s *Schema, l []any, e any) bool {
	keys := keysOf(s)
	for _, o := range l {
		switch {
		case s.ListType == "set" && equalJSON(o, e):
			return false
		case len(keys) > 0 && sameKeys(keys, o, e):
			return false
		}
	}
	return true
}

func sameKeys(keys []string, a, b any) bool {
	am, bm := asMap(a), asMap(b)
	for _, k := range keys {
		if !equalJSON(am[k], bm[k]) {
			return false
		}
	}
	return true
}

func singular(name string) string {
	if strings.HasSuffix(name, "ies") {
		return strings.TrimSuffix(name, "ies") + "y"
	}
	return strings.TrimSuffix(name, "s")
}

// Edit is one change of an object: at Path (dot-separated; a list element as its index), what
// was done.
type Edit struct {
	Path string
	What string
}

func (e Edit) String() string { return e.What + " " + e.Path }

// EditObject returns a changed copy of obj, a whole object of schema root, and the edit made:
// at a path under one of roots (dot-separated, such as "spec", "status", "metadata.labels" or
// "spec.template.spec"), chosen by a random walk through the object and its schema, one change
// of the value found there: a new value, a removal, or an element or key added, removed,
// changed or moved. ok is false when no edit could be made there.
func (g *Gen) EditObject(root *Schema, obj map[string]any, roots []string) (map[string]any, Edit, bool) {
	out := deepCopy(obj).(map[string]any)
	start := strings.Split(pick(g, roots), ".")
	if start[0] == "metadata" {
		return g.editMetadata(out, start)
	}
	s := root.At(start...)
	if s == nil {
		return obj, Edit{}, false
	}
	parent, key := ensurePath(out, start)
	e, ok := g.walk(s, parent, key, start, 0)
	return out, e, ok
}

// ensurePath returns the object holding the last segment of path in obj, creating the objects
// on the way, and that last segment.
func ensurePath(obj map[string]any, path []string) (map[string]any, string) {
	m := obj
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	return m, path[len(path)-1]
}

// walk edits the value at parent[key], of schema s: here, or further down.
func (g *Gen) walk(s *Schema, parent map[string]any, key string, path []string, depth int) (Edit, bool) {
	cur, has := parent[key]
	stop := depth > 0 && g.chance(0.3)
	var (
		e    Edit
		ok   bool
		down bool // the edit was made further down
	)
	switch {
	case !has || stop:
	case isStruct(s):
		e, ok, down = g.intoField(s, cur, path, depth)
	case isMap(s) && g.chance(0.5):
		e, ok, down = g.intoMapValue(s, cur, path, depth)
	case isObjectList(s) && g.chance(0.6):
		e, ok, down = g.intoElement(s, cur, path, depth)
	}
	if down {
		return e, ok
	}
	return g.change(s, parent, key, path, depth)
}

func isStruct(s *Schema) bool { return s.Type == "object" && len(s.Properties) > 0 }
func isMap(s *Schema) bool    { return s.Type == "object" && s.Additional != nil }
func isObjectList(s *Schema) bool {
	return s.Type == "array" && s.Items != nil && s.Items.Type == "object"
}

// intoField walks into a field of cur, an object of struct schema s: one it has, most of the
// time. down is false when there is none to walk into.
func (g *Gen) intoField(s *Schema, cur any, path []string, depth int) (e Edit, ok, down bool) {
	m, isObj := cur.(map[string]any)
	if !isObj {
		return Edit{}, false, false
	}
	var n string
	if len(m) > 0 && g.chance(0.7) {
		n = pick(g, sortedKeys(m))
	} else {
		n = pick(g, s.Names())
	}
	if s.Properties[n] == nil {
		return Edit{}, false, false
	}
	e, ok = g.walk(s.Properties[n], m, n, append(slices.Clip(path), n), depth+1)
	return e, ok, true
}

// intoMapValue walks into a value of cur, a map of schema s, when it is an object.
func (g *Gen) intoMapValue(s *Schema, cur any, path []string, depth int) (e Edit, ok, down bool) {
	m, isObj := cur.(map[string]any)
	if !isObj || len(m) == 0 {
		return Edit{}, false, false
	}
	n := pick(g, sortedKeys(m))
	if _, isObj := m[n].(map[string]any); !isObj {
		return Edit{}, false, false
	}
	e, ok = g.walk(s.Additional, m, n, append(slices.Clip(path), n), depth+1)
	return e, ok, true
}

// intoElement walks into an element of cur, a list of objects of schema s.
func (g *Gen) intoElement(s *Schema, cur any, path []string, depth int) (e Edit, ok, down bool) {
	l, isList := cur.([]any)
	if !isList || len(l) == 0 {
		return Edit{}, false, false
	}
	i := g.R.IntN(len(l))
	elem, isObj := l[i].(map[string]any)
	if !isObj {
		return Edit{}, false, false
	}
	// Edit inside the element (in place), never its keys: an element of a list of type map is
	// identified by them.
	e, ok = g.walkElement(s.Items, keysOf(s), elem, append(slices.Clip(path), fmt.Sprint(i)), depth+1)
	return e, ok, true
}

// walkElement edits inside a list element, never one of its key fields.
func (g *Gen) walkElement(s *Schema, keys []string, m map[string]any, path []string, depth int) (Edit, bool) {
	var names []string
	for _, n := range s.Names() {
		if !slices.Contains(keys, n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return Edit{}, false
	}
	n := pick(g, names)
	return g.walk(s.Properties[n], m, n, append(slices.Clip(path), n), depth)
}

// change makes one change of the value at parent[key], of schema s.
func (g *Gen) change(s *Schema, parent map[string]any, key string, path []string, depth int) (Edit, bool) {
	at := strings.Join(path, ".")
	cur, has := parent[key]
	if has && g.chance(0.15) {
		delete(parent, key)
		return Edit{Path: at, What: "remove"}, true
	}
	switch {
	case has && s.Type == "array":
		l, _ := cur.([]any)
		out, what := g.changeList(s, key, l, depth)
		parent[key] = out
		return Edit{Path: at, What: what}, true
	case has && s.Type == "object" && s.Additional != nil && len(s.Properties) == 0:
		m, _ := cur.(map[string]any)
		out, what := g.changeMap(s, key, m, depth)
		parent[key] = out
		return Edit{Path: at, What: what}, true
	}
	for range 4 {
		v := g.Value(s, key, depth)
		if !has || !equalJSON(v, cur) {
			parent[key] = v
			return Edit{Path: at, What: "set"}, true
		}
	}
	return Edit{}, false
}

func (g *Gen) changeList(s *Schema, name string, l []any, depth int) ([]any, string) {
	l = slices.Clone(l)
	switch n := g.R.IntN(10); {
	case n < 4 || len(l) == 0:
		return g.addElement(s, name, l, depth+1), "add an element to"
	case n < 6:
		i := g.R.IntN(len(l))
		return slices.Delete(l, i, i+1), "remove an element of"
	case n < 8:
		i := g.R.IntN(len(l))
		rest := slices.Delete(slices.Clone(l), i, i+1)
		added := g.addElement(s, name, rest, depth+1)
		if len(added) == len(rest) {
			return l, "keep"
		}
		return added, "replace an element of"
	case len(l) > 1:
		i, j := g.R.IntN(len(l)), g.R.IntN(len(l))
		l[i], l[j] = l[j], l[i]
		return l, "reorder"
	}
	return []any{}, "empty"
}

func (g *Gen) changeMap(s *Schema, name string, m map[string]any, depth int) (map[string]any, string) {
	out := deepCopy(m).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	keys := sortedKeys(out)
	switch n := g.R.IntN(10); {
	case n < 4 || len(keys) == 0:
		out[g.mapKey(name)] = g.Value(s.Additional, name, depth+1)
		return out, "set a key of"
	case n < 7:
		delete(out, pick(g, keys))
		return out, "remove a key of"
	case n < 9:
		out[pick(g, keys)] = g.Value(s.Additional, name, depth+1)
		return out, "change a key of"
	}
	return map[string]any{}, "empty"
}

// editMetadata edits the labels, annotations, finalizers or owner references of obj.
func (g *Gen) editMetadata(obj map[string]any, path []string) (map[string]any, Edit, bool) {
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	field := "labels"
	if len(path) > 1 {
		field = path[1]
	}
	at := "metadata." + field
	switch field {
	case "labels", "annotations":
		m, _ := meta[field].(map[string]any)
		m = deepCopy(m).(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		keys := sortedKeys(m)
		values := poolLabelValues
		if field == "annotations" {
			values = poolTexts
		}
		switch n := g.R.IntN(10); {
		case n < 5 || len(keys) == 0:
			m[g.mapKey(field)] = pick(g, values)
		case n < 8:
			delete(m, pick(g, keys))
		default:
			m = map[string]any{}
		}
		meta[field] = m
		return obj, Edit{Path: at, What: "change"}, true
	case "finalizers":
		l := slices.Clone(asList(meta[field]))
		f := pick(g, poolFinalizers)
		if i := slices.IndexFunc(l, func(e any) bool { return e == f }); i >= 0 {
			l = slices.Delete(l, i, i+1)
		} else {
			l = append(l, f)
		}
		meta[field] = l
		return obj, Edit{Path: at, What: "toggle " + f + " in"}, true
	case "ownerReferences":
		l := slices.Clone(asList(meta[field]))
		i := 1 + g.R.IntN(3)
		uid := fmt.Sprintf("00000000-0000-0000-0000-00000000000%d", i)
		if j := slices.IndexFunc(l, func(e any) bool { return asMap(e)["uid"] == uid }); j >= 0 {
			l = slices.Delete(l, j, j+1)
		} else {
			l = append(l, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": fmt.Sprintf("owner-%d", i), "uid": uid})
		}
		meta[field] = l
		return obj, Edit{Path: at, What: "toggle an owner reference in"}, true
	}
	return obj, Edit{}, false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// deepCopy copies a JSON value.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return map[string]any(nil)
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// equalJSON reports whether two JSON values are equal, numbers compared by value.
func equalJSON(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equalJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if fa, ok := toFloat(a); ok {
		fb, ok := toFloat(b)
		return ok && fa == fb
	}
	return a == b
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// EditAt returns a changed copy of obj, a whole object of schema root, and the edit made: a
// change of the value at path (as an [Edit] names it; an index names a list element, whose
// list is then changed). It is how a test makes two writers change the same field.
func (g *Gen) EditAt(root *Schema, obj map[string]any, path string) (map[string]any, Edit, bool) {
	out := deepCopy(obj).(map[string]any)
	segs := strings.Split(path, ".")
	if segs[0] == "metadata" {
		return g.editMetadata(out, segs)
	}
	s, parent, key := root, out, ""
	for i, seg := range segs {
		if isIndex(seg) {
			// The element's list is what changes.
			segs = segs[:i]
			break
		}
		if i > 0 {
			next, ok := parent[key].(map[string]any)
			if !ok {
				next = map[string]any{}
				parent[key] = next
			}
			parent = next
		}
		key = seg
		s = s.At(seg)
		if s == nil {
			return obj, Edit{}, false
		}
	}
	if len(segs) == 0 {
		return obj, Edit{}, false
	}
	e, ok := g.change(s, parent, key, segs, len(segs))
	return out, e, ok
}

func isIndex(seg string) bool {
	if seg == "" {
		return false
	}
	for _, r := range seg {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
