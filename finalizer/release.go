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

package finalizer

import (
	"bytes"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReleaseValue returns the value of [ReleaseAnnotation] that releases finalizer from obj, an
// object being deleted: the finalizer's name, "@", and obj's deletionTimestamp in RFC 3339, such
// as "apps.example.com/cleanup@2026-12-02T15:04:05Z". It names this deletion, so no annotation set
// before the deletion began (copied from a template, kept in Git) can hold it. It is "" when obj
// is not being deleted.
//
//	kubectl annotate clusters.apps.example.com/demo \
//	  "finalizer.tenon.dev/release=apps.example.com/cleanup@$(kubectl get clusters.apps.example.com/demo -o jsonpath='{.metadata.deletionTimestamp}')"
func ReleaseValue(obj client.Object, finalizer string) string {
	ts := obj.GetDeletionTimestamp()
	if ts == nil {
		return ""
	}
	return finalizer + "@" + ts.UTC().Format(time.RFC3339)
}

// releaseRequest is what the release annotation says to a Lifecycle.
type releaseRequest int

const (
	releaseNone     releaseRequest = iota // absent, or another finalizer's
	releaseGranted                        // names this deletion, or new since it began: release
	releaseUnclear                        // the finalizer's name, there when this Lifecycle first saw the deletion
	releaseMismatch                       // the finalizer's name and a time that is not this deletion's
)

// releaseRequested reads obj's release annotation. A value "<finalizer>@<time>" counts when the
// time, in any RFC 3339 spelling, is obj's deletionTimestamp. The plain finalizer name counts
// only when this Lifecycle saw the deletion without it first (state records the value it saw
// then): an annotation that was there when the Lifecycle first saw the deletion may predate it.
func (l *Lifecycle[T]) releaseRequested(obj T, state *cleanupState) releaseRequest {
	value := obj.GetAnnotations()[ReleaseAnnotation]
	l.mu.Lock()
	atFirstSight := state.releaseAtFirstSight
	l.mu.Unlock()
	if at, ok := strings.CutPrefix(value, l.Finalizer+"@"); ok {
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(at))
		if ts := obj.GetDeletionTimestamp(); err == nil && ts != nil && t.Equal(ts.Time) {
			return releaseGranted
		}
		return releaseMismatch
	}
	switch {
	case value == l.Finalizer && atFirstSight != l.Finalizer:
		return releaseGranted
	case value == l.Finalizer:
		return releaseUnclear
	}
	return releaseNone
}

// firstSight records, the first time this Lifecycle sees obj being deleted, the value of its
// release annotation then.
func (l *Lifecycle[T]) firstSight(obj T, state *cleanupState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !state.seen {
		state.seen = true
		state.releaseAtFirstSight = obj.GetAnnotations()[ReleaseAnnotation]
	}
}

// releaseSetter names who set the release annotation, as obj's managedFields record it (such as
// kubectl-annotate), or says where to look when obj has none (a cache that strips them).
func releaseSetter(obj client.Object) string {
	field := []byte(`"f:` + ReleaseAnnotation + `"`)
	for _, e := range obj.GetManagedFields() {
		if e.FieldsV1 != nil && bytes.Contains(e.FieldsV1.GetRawBytes(), field) {
			return "set by " + e.Manager
		}
	}
	return "the API server's audit log says who set it"
}
