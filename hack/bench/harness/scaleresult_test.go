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
	"testing"
	"time"
)

func TestReadScaleResultReadsWhatTestScaleWrites(t *testing.T) {
	res, err := ReadScaleResult([]byte(`{"clusters": 1000, "replicas": 3, "simulatorDelays": false,
		"operatorArgs": "--cache-transforms=false", "readySeconds": 71.5, "deleteSeconds": 29,
		"writes": 9204, "writesPerCluster": 9.204, "peakRSSBytes": 221249536, "auditWrites": 9204,
		"eventsPerCluster": 1, "steadySeconds": 30, "quietRequired": true}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Clusters != 1000 || res.Replicas != 3 || !res.NoSimulatorDelays || !res.NoCacheTransforms ||
		res.Ready != 71500*time.Millisecond || res.PeakRSS != 221249536 || res.Audit == nil || res.Audit.Writes != 9204 ||
		res.Audit.Steady != 30*time.Second || !res.Audit.QuietRequired {
		t.Errorf("ReadScaleResult = %+v", res)
	}

	res, err = ReadScaleResult([]byte(`{"operator": "floor", "clusters": 1000, "liveHeapBytes": 23900000, "cpuSeconds": 7.69,
		"steadyCPUSeconds": 0.01, "profiledCPUSeconds": 6.1, "tenonCPUSeconds": 0, "sentBytes": 4419000, "guardBytes": 45000, "receivedBytes": 13057000,
		"watchBytes": 6164000, "watches": {"clusters": 1, "configmaps": 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Floor || res.LiveHeap != 23900000 || res.CPU != 7690*time.Millisecond || res.SteadyCPU != 10*time.Millisecond ||
		res.ProfiledCPU != 6100*time.Millisecond || res.SentBytes != 4419000 || res.GuardBytes != 45000 || res.ReceivedBytes != 13057000 ||
		res.WatchBytes != 6164000 || res.Watches["clusters"] != 1 || len(res.Watches) != 2 {
		t.Errorf("ReadScaleResult of the floor operator's result = %+v", res)
	}

	res, err = ReadScaleResult([]byte(`{"clusters": 1000, "tenonCPUSeconds": 4.46, "tenonClientCPUSeconds": 1.32, "tenonCallbackCPUSeconds": 0.4}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.TenonCPU != 4460*time.Millisecond || res.TenonClientCPU != 1320*time.Millisecond || res.TenonCallbackCPU != 400*time.Millisecond {
		t.Errorf("ReadScaleResult of tenon's CPU split = %v, %v, %v", res.TenonCPU, res.TenonClientCPU, res.TenonCallbackCPU)
	}

	res, err = ReadScaleResult([]byte(`{"clusters": 100}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Replicas != 3 || res.NoSimulatorDelays || res.NoCacheTransforms || res.Floor {
		t.Errorf("a result from before the flags existed: %+v, want 3 replicas, delays and transforms", res)
	}
	if _, err := ReadScaleResult([]byte(`{`)); err == nil {
		t.Error("ReadScaleResult of broken JSON succeeded")
	}
}
