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

package chaos

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestGrowthSeesALevelThatKeepsRisingAndNotOneThatLevelsOff(t *testing.T) {
	g := NewWithT(t)
	var leaking, levelled []sample
	for i := range 40 {
		leaking = append(leaking, sample{RSS: int64(50+i) << 20, Goroutines: 100 + 3*i})
		// Warm-up in the first quarter, then flat with noise.
		rss, gor := int64(80)<<20, 150
		if i < 10 {
			rss, gor = int64(50+3*i)<<20, 100+5*i
		}
		levelled = append(levelled, sample{RSS: rss + int64(i%3)<<20, Goroutines: gor + i%4})
	}
	rss, gor, ok := growth(leaking)
	g.Expect(ok).To(BeTrue())
	g.Expect(rss).To(BeNumerically("~", 20<<20, 1<<20), "a leak of 1 MiB per sample grows 20 MiB from the second to the last quarter")
	g.Expect(gor).To(BeNumerically("~", 60, 3))
	rss, gor, ok = growth(levelled)
	g.Expect(ok).To(BeTrue())
	g.Expect(rss).To(BeNumerically("<=", 2<<20))
	g.Expect(gor).To(BeNumerically("<=", 3))
	_, _, ok = growth(leaking[:7])
	g.Expect(ok).To(BeFalse(), "too few samples to tell")
}
