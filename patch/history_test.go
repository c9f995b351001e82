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
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func historyConfigMap(uid, rv, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns", UID: types.UID(uid), ResourceVersion: rv},
		Data:       map[string]string{"k": value},
	}
}

func TestHistoryNewer(t *testing.T) {
	tests := []struct {
		name     string
		recorded []client.Object
		snapshot client.Object
		// want is the value of data.k of the object newer returns; "" for none.
		want string
		// kept reports whether the entry is still there afterwards, for a snapshot as old as the
		// first recorded object.
		kept bool
	}{
		{
			name:     "an entry newer than the snapshot is returned and kept",
			recorded: []client.Object{historyConfigMap("u1", "20", "written")},
			snapshot: historyConfigMap("u1", "10", "stale"),
			want:     "written", kept: true,
		},
		{
			name:     "an entry as new as the snapshot is dropped: the cache caught up",
			recorded: []client.Object{historyConfigMap("u1", "20", "written")},
			snapshot: historyConfigMap("u1", "20", "written"),
			kept:     false,
		},
		{
			name:     "an entry older than the snapshot is dropped",
			recorded: []client.Object{historyConfigMap("u1", "20", "written")},
			snapshot: historyConfigMap("u1", "30", "theirs"),
			kept:     false,
		},
		{
			name:     "another object's entry, same name, other uid, is never used",
			recorded: []client.Object{historyConfigMap("u1", "20", "written")},
			snapshot: historyConfigMap("u2", "10", "recreated"),
			kept:     true,
		},
		{
			name:     "a resourceVersion that is not an integer is never compared",
			recorded: []client.Object{historyConfigMap("u1", "b", "written")},
			snapshot: historyConfigMap("u1", "a", "stale"),
			kept:     true,
		},
		{
			name:     "an older write recorded after a newer one does not replace it",
			recorded: []client.Object{historyConfigMap("u1", "20", "newer"), historyConfigMap("u1", "15", "older")},
			snapshot: historyConfigMap("u1", "10", "stale"),
			want:     "newer", kept: true,
		},
		{
			name:     "a newer write replaces the entry",
			recorded: []client.Object{historyConfigMap("u1", "15", "older"), historyConfigMap("u1", "20", "newer")},
			snapshot: historyConfigMap("u1", "10", "stale"),
			want:     "newer", kept: true,
		},
		{
			name: "an object of another Go type is not returned",
			recorded: []client.Object{func() client.Object {
				u := &unstructured.Unstructured{}
				u.SetAPIVersion("v1")
				u.SetKind("ConfigMap")
				u.SetUID("u1")
				u.SetResourceVersion("20")
				return u
			}()},
			snapshot: historyConfigMap("u1", "10", "stale"),
			kept:     true,
		},
		{
			name:     "a snapshot without a uid uses nothing",
			recorded: []client.Object{historyConfigMap("u1", "20", "written")},
			snapshot: historyConfigMap("", "10", "stale"),
			kept:     true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			h := &History{}
			for _, obj := range tt.recorded {
				h.record(obj)
			}
			got := ""
			if obj := h.newer(tt.snapshot); obj != nil {
				got = obj.(*corev1.ConfigMap).Data["k"]
			}
			g.Expect(got).To(Equal(tt.want), "the recorded object's data.k")
			_, kept := h.lookupLocked(tt.recorded[0].GetUID(), time.Now())
			g.Expect(kept).To(Equal(tt.kept), "whether the entry is kept")
		})
	}
}

func TestHistoryRecordsACopyAndReturnsACopy(t *testing.T) {
	g := NewWithT(t)
	h := &History{}
	written := historyConfigMap("u1", "20", "written")
	h.record(written)
	written.Data["k"] = "changed by the caller after the write"

	first := h.newer(historyConfigMap("u1", "10", "stale"))
	g.Expect(first).NotTo(BeNil())
	first.(*corev1.ConfigMap).Data["k"] = "changed by a Patch"
	second := h.newer(historyConfigMap("u1", "10", "stale"))
	if diff := cmp.Diff(historyConfigMap("u1", "20", "written"), second); diff != "" {
		t.Errorf("the recorded object changed with the objects it was made from or given to (-want +got):\n%s", diff)
	}
}

func TestHistoryEntriesExpire(t *testing.T) {
	g := NewWithT(t)
	h := &History{TTL: 20 * time.Millisecond}
	h.record(historyConfigMap("u1", "20", "written"))
	g.Expect(h.newer(historyConfigMap("u1", "10", "stale"))).NotTo(BeNil(), "the entry right after the write")
	g.Eventually(func() client.Object { return h.newer(historyConfigMap("u1", "10", "stale")) }).
		WithTimeout(5*time.Second).WithPolling(5*time.Millisecond).Should(BeNil(), "the entry after its TTL")

	// Inserting after the TTL starts a new generation: the expired ones are forgotten.
	for i := range 3 {
		h.record(historyConfigMap(fmt.Sprintf("old-%d", i), "20", "written"))
	}
	g.Eventually(func() int {
		h.record(historyConfigMap("new", "20", "written"))
		h.mu.Lock()
		defer h.mu.Unlock()
		_, old := h.old["old-0"]
		_, cur := h.cur["old-0"]
		if old || cur {
			return 1
		}
		return len(h.cur) + len(h.old)
	}).WithTimeout(5*time.Second).WithPolling(5*time.Millisecond).Should(Equal(1), "entries kept after two TTLs of new inserts")
}

func TestHistoryKeepsAtMostAboutMaxEntries(t *testing.T) {
	g := NewWithT(t)
	h := &History{MaxEntries: 10}
	for i := range 1000 {
		h.record(historyConfigMap("u"+strconv.Itoa(i), "20", "written"))
		h.mu.Lock()
		n := len(h.cur) + len(h.old)
		h.mu.Unlock()
		g.Expect(n).To(BeNumerically("<=", 10), "entries kept after %d records", i+1)
	}
	g.Expect(h.newer(historyConfigMap("u999", "10", "stale"))).NotTo(BeNil(), "the last recorded entry")
	g.Expect(h.newer(historyConfigMap("u0", "10", "stale"))).To(BeNil(), "the first recorded entry")
}

func TestHistoryIsSafeForConcurrentUse(t *testing.T) {
	g := NewWithT(t)
	h := &History{MaxEntries: 64}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 500 {
				uid := fmt.Sprintf("u%d", (w*7+i)%100)
				h.record(historyConfigMap(uid, strconv.Itoa(100+i), "written"))
				_ = h.newer(historyConfigMap(uid, strconv.Itoa(90+i), "stale"))
			}
		})
	}
	wg.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	g.Expect(len(h.cur) + len(h.old)).To(BeNumerically("<=", 64))
	for uid, e := range h.cur {
		g.Expect(e.obj.GetUID()).To(Equal(uid), "an entry under another object's uid")
	}
}

func TestANilHistoryDoesNothing(t *testing.T) {
	g := NewWithT(t)
	var h *History
	o := newHelperOptions(NewWriter(nil, WriterOptions{History: h}), nil)
	h.record(historyConfigMap("u1", "20", "written"))
	g.Expect(o.history.newer(historyConfigMap("u1", "10", "stale"))).To(BeNil())
}
