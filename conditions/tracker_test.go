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

package conditions_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/tenon-dev/tenon/conditions"
)

func TestTrackerDeletesOnlyOwnedUntouchedConditions(t *testing.T) {
	g := NewWithT(t)
	w := widget(1,
		cond("Ready", "True", "R", "", 1, at(0)),
		cond("BackupReady", "True", "R", "", 1, at(0)),
		cond("ConfigReady", "True", "R", "", 1, at(0)),
		cond("ExternalOwned", "True", "R", "", 1, at(0)),
	)
	tr := conditions.Track(w)

	_, err := conditions.MarkTrue(tr, "ConfigReady", "R", "")
	g.Expect(err).NotTo(HaveOccurred())
	_, err = conditions.Summarize(tr, conditions.Ready, []conditions.Type{"ConfigReady"})
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(tr.Touched()).To(Equal([]conditions.Type{"ConfigReady", "Ready"}))
	g.Expect(tr.DeleteUntouched("Ready", "ConfigReady", "BackupReady")).To(BeTrue())
	g.Expect(types(w.Status.Conditions)).To(Equal([]string{"Ready", "ConfigReady", "ExternalOwned"}),
		"BackupReady was owned and not set this time; ExternalOwned belongs to someone else")
	g.Expect(tr.DeleteUntouched("Ready", "ConfigReady", "BackupReady")).To(BeFalse())
}

func TestTrackerInsertsInTheTrackedObjectsOrder(t *testing.T) {
	g := NewWithT(t)
	o := &ordered{}
	tr := conditions.Track(o)
	for _, ct := range []conditions.Type{"Alpha", "Progressing", conditions.Ready} {
		_, err := conditions.MarkTrue(tr, ct, "R", "")
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(types(o.Status.Conditions)).To(Equal([]string{"Ready", "Progressing", "Alpha"}))
}
