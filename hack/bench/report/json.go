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

package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/hack/bench/contender"
	"github.com/tenon-dev/tenon/hack/bench/harness"
)

// rawReport is the JSON form of a report: every measurement, for auditing and re-analysis.
type rawReport struct {
	Command     string              `json:"command"`
	Started     time.Time           `json:"started"`
	Finished    time.Time           `json:"finished"`
	Environment Environment         `json:"environment"`
	Params      harness.Params      `json:"params"`
	Runs        []harness.RunResult `json:"runs"`
	// ClusterOperator is absent when the workload did not run, as in measurements saved before
	// it existed.
	ClusterOperator *harness.ClusterOperatorResult `json:"clusterOperator,omitempty"`
	// ClusterOperatorFloor is the floor operator on the same workload.
	ClusterOperatorFloor *harness.ClusterOperatorResult `json:"clusterOperatorFloor,omitempty"`
}

// WriteJSON writes every measurement to path as JSON.
func (r *Report) WriteJSON(path string) error {
	data, err := json.MarshalIndent(rawReport{
		Command: r.in.Command, Started: r.in.Started.UTC(), Finished: r.in.Finished.UTC(),
		Environment: r.env, Params: r.in.Params, Runs: r.in.Runs,
		ClusterOperator: r.in.ClusterOperator, ClusterOperatorFloor: r.in.ClusterOperatorFloor,
	}, "", "  ")
	if err != nil {
		return fmt.Errorf("failed to encode measurements: %w", err)
	}
	return writeFile(path, append(data, '\n'))
}

// Load reads measurements written by WriteJSON, to render the report again without measuring.
func Load(path string) (Input, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Input{}, fmt.Errorf("failed to read measurements: %w", err)
	}
	var raw rawReport
	if err := json.Unmarshal(data, &raw); err != nil {
		return Input{}, fmt.Errorf("failed to decode measurements in %s: %w", path, err)
	}
	var names []string
	for _, run := range raw.Runs {
		if !slices.Contains(names, run.Contender) {
			names = append(names, run.Contender)
		}
	}
	contenders, err := contender.Select(strings.Join(names, ","))
	if err != nil {
		return Input{}, fmt.Errorf("failed to load measurements in %s: %w", path, err)
	}
	return Input{
		Params: raw.Params, Contenders: contenders, Runs: raw.Runs, ClusterOperator: raw.ClusterOperator, ClusterOperatorFloor: raw.ClusterOperatorFloor, Command: raw.Command,
		Started: raw.Started, Finished: raw.Finished, Environment: &raw.Environment,
	}, nil
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("failed to create directory for %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("failed to write %s: %w", path, err)
	}
	return nil
}
