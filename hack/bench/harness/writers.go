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

package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tenon-dev/tenon/hack/bench/api/v1"
)

// WriterStats describes the concurrent writers of a contention workload.
type WriterStats struct {
	// Ops counts the edits the writers made, Errors those that failed.
	Ops    int `json:"ops"`
	Errors int `json:"errors"`
	// Duration is how long the writers took, from the first edit to the last.
	Duration time.Duration `json:"duration"`
	// ErrorSamples are some of the writers' errors.
	ErrorSamples []string `json:"errorSamples,omitempty"`
}

// The kinds of edit a writer makes, in turn.
const (
	editLabel = iota
	editKnob
	editCondition
	editKinds
)

// writerLog is what one writer last wrote and the API server acknowledged, per object and kind
// of edit: the value each field must hold at the end.
type writerLog struct {
	writer int
	last   [editKinds]map[string]string
}

// writerLabel, writerKnob and writerCondition name the fields writer w owns.
func writerLabel(w int) string     { return fmt.Sprintf("bench.tenon.dev/writer-%d", w) }
func writerKnob(w int) string      { return fmt.Sprintf("writer-%d", w) }
func writerCondition(w int) string { return fmt.Sprintf("Writer%d", w) }

// runWriters runs params.Writers writers concurrently, each making params.OpsPerWriter edits to
// Widgets picked at random from names: in turn a label, a spec.knobs key and a status condition,
// each a field only this writer writes, set to a new value every time. They use the benchmark's
// own client, the way another controller or a user would, with requests that cannot overwrite
// anyone else's fields:
//
//   - labels and knobs: a JSON merge patch of just the one key (no resourceVersion: nothing to
//     conflict with);
//   - conditions: server-side apply of just the one condition, under the writer's own field
//     manager (status.conditions is a list of type map, so the API server merges by type).
//
// The writers' random choices depend only on params.Seed, the run and the writer, so every
// contender of a run faces the same sequence of edits.
func runWriters(ctx context.Context, c client.Client, namespace string, names []string, params Params, run int) (WriterStats, []*writerLog) {
	var (
		mu    sync.Mutex
		stats WriterStats
		wg    sync.WaitGroup
	)
	logs := make([]*writerLog, params.Writers)
	start := time.Now()
	for w := range params.Writers {
		log := &writerLog{writer: w}
		for k := range log.last {
			log.last[k] = map[string]string{}
		}
		logs[w] = log
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(params.Seed), uint64(run)<<16|uint64(w)))
			for op := range params.OpsPerWriter {
				name := names[rng.IntN(len(names))]
				kind := op % editKinds
				value := strconv.Itoa(op + 1)
				err := edit(ctx, c, types.NamespacedName{Namespace: namespace, Name: name}, w, kind, value)
				mu.Lock()
				stats.Ops++
				if err != nil {
					stats.Errors++
					if len(stats.ErrorSamples) < maxErrorSamples {
						stats.ErrorSamples = append(stats.ErrorSamples, err.Error())
					}
				}
				mu.Unlock()
				if err == nil {
					log.last[kind][name] = value
				}
			}
		}()
	}
	wg.Wait()
	stats.Duration = time.Since(start)
	return stats, logs
}

// edit makes one writer's edit of one kind.
func edit(ctx context.Context, c client.Client, key types.NamespacedName, w, kind int, value string) error {
	target := &benchv1.Widget{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
	switch kind {
	case editLabel:
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{writerLabel(w): value}}})
		if err != nil {
			return fmt.Errorf("failed to encode label patch: %w", err)
		}
		if err := c.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return fmt.Errorf("failed to patch label: %w", err)
		}
	case editKnob:
		patch, err := json.Marshal(map[string]any{"spec": map[string]any{"knobs": map[string]string{writerKnob(w): value}}})
		if err != nil {
			return fmt.Errorf("failed to encode knob patch: %w", err)
		}
		if err := c.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return fmt.Errorf("failed to patch knob: %w", err)
		}
	case editCondition:
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": benchv1.GroupVersion.String(),
			"kind":       "Widget",
			"metadata":   map[string]any{"name": key.Name, "namespace": key.Namespace},
			"status": map[string]any{"conditions": []any{map[string]any{
				"type":               writerCondition(w),
				"status":             "True",
				"reason":             "Edited",
				"message":            value,
				"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
			}}},
		}}
		err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
			client.FieldOwner("bench-writer-"+strconv.Itoa(w)), client.ForceOwnership)
		if err != nil {
			return fmt.Errorf("failed to apply condition: %w", err)
		}
	}
	return nil
}

// verifyWriters reads every Widget and checks, field by field, that each writer's last
// acknowledged value is there. It returns the number of fields that are not, and a few examples.
func (s *runState) verifyWriters(ctx context.Context, logs []*writerLog) (lost int, samples []string, err error) {
	list := &benchv1.WidgetList{}
	if err := s.env.direct.List(ctx, list, client.InNamespace(s.namespace)); err != nil {
		return 0, nil, fmt.Errorf("failed to list widgets: %w", err)
	}
	byName := make(map[string]*benchv1.Widget, len(list.Items))
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	report := func(format string, args ...any) {
		lost++
		if len(samples) < maxErrorSamples {
			samples = append(samples, fmt.Sprintf(format, args...))
		}
	}
	for _, log := range logs {
		for kind, last := range log.last {
			names := make([]string, 0, len(last))
			for n := range last {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, name := range names {
				want := last[name]
				w, ok := byName[name]
				if !ok {
					report("%s: gone", name)
					continue
				}
				var got, field string
				switch kind {
				case editLabel:
					field, got = "label "+writerLabel(log.writer), w.Labels[writerLabel(log.writer)]
				case editKnob:
					field, got = "spec.knobs."+writerKnob(log.writer), w.Spec.Knobs[writerKnob(log.writer)]
				case editCondition:
					field = "condition " + writerCondition(log.writer)
					got = "<missing>"
					for _, c := range w.Status.Conditions {
						if c.Type == writerCondition(log.writer) {
							got = c.Message
						}
					}
				}
				if got != want {
					report("%s: %s is %q, the writer last set %q", name, field, got, want)
				}
			}
		}
	}
	return lost, samples, nil
}
