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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// Schema is the part of an OpenAPI v3 schema, as the API server serves it, that decides which
// values a field takes and how writers share it: its type, its list and map types and keys,
// and the formats the API server normalizes.
type Schema struct {
	// Type is "object", "array", "string", "integer", "number", "boolean", or "" for any value
	// (x-kubernetes-preserve-unknown-fields without properties, or int-or-string).
	Type   string
	Format string
	Enum   []any
	// Ref names the component the schema came from ("io.k8s.api.core.v1.PodSpec"), or "".
	Ref string

	// Properties are the fields of a struct; Additional the values of a map.
	Properties map[string]*Schema
	Required   []string
	Additional *Schema
	// MapType is x-kubernetes-map-type: "atomic" or "granular" ("" for granular).
	MapType string

	// Items are a list's elements; ListType x-kubernetes-list-type ("atomic", "set", "map",
	// or "" for none) and ListMapKeys its keys. PatchMergeKey is a built-in kind's
	// x-kubernetes-patch-merge-key, for strategic merge patch.
	Items         *Schema
	ListType      string
	ListMapKeys   []string
	PatchMergeKey string

	IntOrString      bool
	PreserveUnknown  bool
	EmbeddedResource bool
	Nullable         bool

	Pattern              string
	MinLength, MaxLength *int64
	Minimum, Maximum     *float64
	MaxItems, MinItems   *int64
	MaxProperties        *int64
	// Validations are the CEL rules of x-kubernetes-validations, for descriptions.
	Validations []string
}

// IsQuantity reports whether s is a resource.Quantity, which the API server keeps in a
// canonical form ("1000m" reads back as "1").
func (s *Schema) IsQuantity() bool {
	return s != nil && strings.HasSuffix(s.Ref, "pkg.api.resource.Quantity")
}

// IsTime reports whether s is a timestamp, which the API server keeps to the second.
func (s *Schema) IsTime() bool {
	return s != nil && (s.Format == "date-time" || strings.HasSuffix(s.Ref, "pkg.apis.meta.v1.Time"))
}

// Names returns the names of s's properties, sorted.
func (s *Schema) Names() []string {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// At returns the schema of the field at path under s, following properties, map values and
// list elements (for which path has no element); nil when there is none.
func (s *Schema) At(path ...string) *Schema {
	cur := s
	for _, p := range path {
		for cur != nil && cur.Type == "array" {
			cur = cur.Items
		}
		switch {
		case cur == nil:
			return nil
		case cur.Properties[p] != nil:
			cur = cur.Properties[p]
		case cur.Additional != nil:
			cur = cur.Additional
		default:
			return nil
		}
	}
	return cur
}

// Load returns the schema of gvk as the API server at cfg serves it (its OpenAPI v3
// document for the kind's group and version). The API server publishes a CRD's schema a moment
// after the CRD is established: Load waits for it until ctx is done.
func Load(ctx context.Context, cfg *rest.Config, gvk schema.GroupVersionKind) (*Schema, error) {
	for {
		s, err := load(cfg, gvk)
		if err == nil || !errors.Is(err, errNotPublished) {
			return s, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

var errNotPublished = errors.New("not published yet")

func load(cfg *rest.Config, gvk schema.GroupVersionKind) (*Schema, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create a discovery client: %w", err)
	}
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		return nil, fmt.Errorf("failed to list the OpenAPI v3 paths: %w", err)
	}
	path := "apis/" + gvk.Group + "/" + gvk.Version
	if gvk.Group == "" {
		path = "api/" + gvk.Version
	}
	gv, ok := paths[path]
	if !ok {
		return nil, fmt.Errorf("the API server serves no OpenAPI v3 document at %s: %w", path, errNotPublished)
	}
	data, err := gv.Schema("application/json")
	if err != nil {
		return nil, fmt.Errorf("failed to read the OpenAPI v3 document at %s: %w", path, err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("failed to decode the OpenAPI v3 document at %s: %w", path, err)
	}
	for name, raw := range doc.Components.Schemas {
		if hasGVK(raw, gvk) {
			r := &resolver{components: doc.Components.Schemas, done: map[string]*Schema{}}
			return r.component(name), nil
		}
	}
	return nil, fmt.Errorf("the OpenAPI v3 document at %s has no schema for %s: %w", path, gvk.Kind, errNotPublished)
}

func hasGVK(raw map[string]any, gvk schema.GroupVersionKind) bool {
	list, _ := raw["x-kubernetes-group-version-kind"].([]any)
	for _, e := range list {
		m, _ := e.(map[string]any)
		if m["group"] == gvk.Group && m["version"] == gvk.Version && m["kind"] == gvk.Kind {
			return true
		}
	}
	return false
}

// resolver turns raw OpenAPI v3 schemas into Schemas, resolving references to components once
// each (so that recursive schemas end).
type resolver struct {
	components map[string]map[string]any
	done       map[string]*Schema
}

func (r *resolver) component(name string) *Schema {
	if s, ok := r.done[name]; ok {
		return s
	}
	s := &Schema{Ref: name}
	r.done[name] = s
	r.fill(s, r.components[name])
	s.Ref = name
	return s
}

// schema converts raw, following a reference or an allOf of one.
func (r *resolver) schema(raw map[string]any) *Schema {
	if raw == nil {
		return nil
	}
	if ref, ok := raw["$ref"].(string); ok {
		return r.component(strings.TrimPrefix(ref, "#/components/schemas/"))
	}
	if all, ok := raw["allOf"].([]any); ok && len(all) == 1 && raw["properties"] == nil && raw["type"] == nil {
		// A reference with a description or a default of its own beside it.
		base := r.schema(asMap(all[0]))
		if base == nil {
			return nil
		}
		// Extensions on the referring schema (a list type on a list of references) apply to
		// this use of the component only.
		copied := *base
		r.extensions(&copied, raw)
		return &copied
	}
	s := &Schema{}
	r.fill(s, raw)
	return s
}

func (r *resolver) fill(s *Schema, raw map[string]any) {
	s.Type, _ = raw["type"].(string)
	s.Format, _ = raw["format"].(string)
	s.Enum, _ = raw["enum"].([]any)
	s.Pattern, _ = raw["pattern"].(string)
	s.Nullable, _ = raw["nullable"].(bool)
	s.MinLength, s.MaxLength = integer(raw["minLength"]), integer(raw["maxLength"])
	s.MinItems, s.MaxItems = integer(raw["minItems"]), integer(raw["maxItems"])
	s.MaxProperties = integer(raw["maxProperties"])
	s.Minimum, s.Maximum = float(raw["minimum"]), float(raw["maximum"])
	for _, e := range asList(raw["required"]) {
		if n, ok := e.(string); ok {
			s.Required = append(s.Required, n)
		}
	}
	if props := asMap(raw["properties"]); len(props) > 0 {
		s.Properties = map[string]*Schema{}
		for name, p := range props {
			s.Properties[name] = r.schema(asMap(p))
		}
		if s.Type == "" {
			s.Type = "object"
		}
	}
	if add, ok := raw["additionalProperties"].(map[string]any); ok {
		s.Additional = r.schema(add)
		if s.Type == "" {
			s.Type = "object"
		}
	}
	if items := asMap(raw["items"]); items != nil {
		s.Items = r.schema(items)
	}
	r.extensions(s, raw)
}

func (r *resolver) extensions(s *Schema, raw map[string]any) {
	if v, ok := raw["x-kubernetes-list-type"].(string); ok {
		s.ListType = v
	}
	if keys := asList(raw["x-kubernetes-list-map-keys"]); len(keys) > 0 {
		s.ListMapKeys = nil
		for _, k := range keys {
			if n, ok := k.(string); ok {
				s.ListMapKeys = append(s.ListMapKeys, n)
			}
		}
	}
	if v, ok := raw["x-kubernetes-map-type"].(string); ok {
		s.MapType = v
	}
	if v, ok := raw["x-kubernetes-patch-merge-key"].(string); ok {
		s.PatchMergeKey = v
	}
	s.IntOrString = s.IntOrString || isTrue(raw["x-kubernetes-int-or-string"])
	s.PreserveUnknown = s.PreserveUnknown || isTrue(raw["x-kubernetes-preserve-unknown-fields"])
	s.EmbeddedResource = s.EmbeddedResource || isTrue(raw["x-kubernetes-embedded-resource"])
	for _, v := range asList(raw["x-kubernetes-validations"]) {
		if rule, ok := asMap(v)["rule"].(string); ok && !slices.Contains(s.Validations, rule) {
			s.Validations = append(s.Validations, rule)
		}
	}
}

// isTrue reports whether v is the boolean true.
func isTrue(v any) bool {
	b, _ := v.(bool)
	return b
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func integer(v any) *int64 {
	f, ok := v.(float64)
	if !ok {
		return nil
	}
	n := int64(f)
	return &n
}

func float(v any) *float64 {
	f, ok := v.(float64)
	if !ok {
		return nil
	}
	return &f
}
