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
	"strings"
	"testing"
	"unicode/utf8"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenon-dev/tenon/conditions"
)

func TestValidateAcceptsWhatTheAPIServerAccepts(t *testing.T) {
	for _, ct := range []string{"Ready", "example.com/Ready", "a.b-c.d/x_y.z-1", "9", strings.Repeat("a", 63), strings.Repeat("a", 252) + "/" + strings.Repeat("b", 63)} {
		for _, reason := range []string{"R", "Succeeded", "Reason_1", "A,B", "A:B", "a_", strings.Repeat("A", 1024)} {
			c := cond(conditions.Type(ct), "True", conditions.Reason(reason), strings.Repeat("m", 32768), 0, at(0))
			if err := conditions.Validate(c); err != nil {
				t.Errorf("type %q reason %q: %v", ct, reason, err)
			}
		}
	}
}

func TestValidateRequiresATransitionTimeAndANonNegativeGeneration(t *testing.T) {
	g := NewWithT(t)
	c := cond("Ready", "True", "R", "", 0, metav1.Time{})
	g.Expect(conditions.Validate(c)).To(MatchError(ContainSubstring("lastTransitionTime: Required value")))

	c = cond("Ready", "True", "R", "", -1, at(0))
	g.Expect(conditions.Validate(c)).To(MatchError(ContainSubstring("observedGeneration: Invalid value: -1")))
}

func TestValidateNamesOnlyTheRulesBroken(t *testing.T) {
	g := NewWithT(t)
	longest := conditions.Type(strings.Repeat("a", 252) + "/" + strings.Repeat("b", 63)) // 316
	err := conditions.Validate(cond(longest, "Maybe", "R", "", 0, at(0)))
	g.Expect(err).To(MatchError(ContainSubstring("status: Unsupported value")))
	g.Expect(err.Error()).NotTo(ContainSubstring("Too long"), "the longest type is not too long")

	err = conditions.Validate(cond(longest+"b", "True", "R", "", 0, at(0)))
	g.Expect(err).To(MatchError(ContainSubstring("type: Too long: may not be more than 316")))
}

func TestReasonFrom(t *testing.T) {
	tests := []struct {
		text string
		want conditions.Reason
	}{
		{"failed to create record: dial tcp 10.0.0.1:53: connection refused", "FailedToCreateRecord"},
		{"connection refused", "ConnectionRefused"},
		{"already CamelCase", "AlreadyCamelCase"},
		{"404 not found", "Error404NotFound"},
		{"  spaces\tand\nnewlines  ", "SpacesAndNewlines"},
		{"naïve café", "NaVeCaf"},
		{"", conditions.ReasonFailed},
		{": starts with a colon", conditions.ReasonFailed},
		{"!!!", conditions.ReasonFailed},
		{strings.Repeat("word ", 100), conditions.Reason(strings.Repeat("Word", 32))},
		{strings.Repeat("w", 200), conditions.Reason("W" + strings.Repeat("w", 127))},
		{"9" + strings.Repeat("w", 200), conditions.Reason("Error9" + strings.Repeat("w", 122))},
		{"zone z9 a Z", "ZoneZ9AZ"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			g := NewWithT(t)
			got := conditions.ReasonFrom(tt.text)
			g.Expect(got).To(Equal(tt.want))
			g.Expect(conditions.Validate(cond("Ready", "False", got, "", 0, at(0)))).To(Succeed())
		})
	}
}

func TestMarkTruncatesALongMessage(t *testing.T) {
	g := NewWithT(t)
	message := func(m string) string {
		w := widget(1)
		conditions.MarkFalse(w, conditions.Ready, conditions.ReasonFailed, m)
		return w.Status.Conditions[0].Message
	}
	g.Expect(message("short")).To(Equal("short"))

	exact := strings.Repeat("x", 32768)
	g.Expect(message(exact)).To(Equal(exact))

	got := message(strings.Repeat("€", 32768)) // 3 bytes each
	g.Expect(len(got)).To(BeNumerically("<=", 32768))
	g.Expect(utf8.ValidString(got)).To(BeTrue())
	g.Expect(got).To(HaveSuffix("€…"))

	g.Expect(message("a\xffb")).To(Equal("a\uFFFDb"))
}
