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
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/internal/testtypes"
)

// limitCase is a condition one step from a limit of the API server's validation.
type limitCase struct {
	name string
	c    metav1.Condition
	// stricter marks a condition that a custom resource's schema accepts and Validate refuses
	// on purpose: it applies the rules of the API server's own validation of metav1.Condition
	// (a qualified name, a message counted in bytes), which built-in kinds enforce, so that a
	// condition valid for one is valid for all.
	stricter bool
}

// limitCases returns conditions at limit−1, limit and limit+1 of each rule of
// metav1.Condition: type (a qualified name, and the schema's 316 characters in all), status,
// reason (length and character classes at both ends), message, observedGeneration,
// lastTransitionTime.
func limitCases() []limitCase {
	base := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: metav1.Unix(1, 0)}
	with := func(name string, f func(*metav1.Condition)) limitCase {
		c := base
		f(&c)
		return limitCase{name: name, c: c}
	}
	var cases []limitCase
	for _, n := range []int{62, 63, 64} {
		cases = append(cases, with("type name of "+strconv.Itoa(n), func(c *metav1.Condition) { c.Type = strings.Repeat("t", n) }))
	}
	// A prefix of 253 characters (the longest subdomain), then "/" and the name: 316 in all is
	// the schema's limit, below the 317 the qualified-name rule allows.
	prefix := strings.Repeat("a", 61) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 63)
	for _, n := range []int{61, 62, 63} {
		cases = append(cases, with("type of "+strconv.Itoa(len(prefix)+1+n), func(c *metav1.Condition) { c.Type = prefix + "/" + strings.Repeat("t", n) }))
	}
	for _, n := range []int{252, 253, 254} {
		cases = append(cases, with("type prefix of "+strconv.Itoa(n), func(c *metav1.Condition) {
			c.Type = strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", n-3*64) + "/t"
		}))
	}
	for _, typ := range []string{"t", "T", "9", "-t", "t-", "t.", "_t", "t_", "a/t", "A/t", "a-/t", "a./t", "a..b/t", "a-b/t", "a_b/t", "aBc/t", "/t", "a/", "a/b/c", "Zz09", "az09.z-9/Zz09"} {
		cases = append(cases, with("type "+typ, func(c *metav1.Condition) { c.Type = typ }))
	}
	for _, s := range []metav1.ConditionStatus{"True", "False", "Unknown", "true", ""} {
		cases = append(cases, with("status "+string(s), func(c *metav1.Condition) { c.Status = s }))
	}
	for _, n := range []int{1023, 1024, 1025} {
		cases = append(cases, with("reason of "+strconv.Itoa(n), func(c *metav1.Condition) { c.Reason = strings.Repeat("R", n) }))
	}
	for _, r := range []string{"", "R", "r", "9", "_R", "R_", "R,", "R:", "R9", "R,S", "R:S", "R_S", "R-S", "R S", "R.S", "Ré", "Zz09", "aZ:z,9_"} {
		cases = append(cases, with("reason "+r, func(c *metav1.Condition) { c.Reason = r }))
	}
	for _, n := range []int{32767, 32768, 32769} {
		cases = append(cases, with("message of "+strconv.Itoa(n)+" bytes", func(c *metav1.Condition) { c.Message = strings.Repeat("m", n) }))
	}
	// 16,385 two-byte characters: 32,770 bytes, which the schema (counting characters) accepts.
	wide := with("message of 16385 two-byte characters", func(c *metav1.Condition) { c.Message = strings.Repeat("é", 16385) })
	wide.stricter = true
	cases = append(cases, wide)
	for _, g := range []int64{-1, 0, 1} {
		cases = append(cases, with("observedGeneration "+strconv.FormatInt(g, 10), func(c *metav1.Condition) { c.ObservedGeneration = g }))
	}
	cases = append(cases, with("no lastTransitionTime", func(c *metav1.Condition) { c.LastTransitionTime = metav1.Time{} }))

	for i := range cases {
		if strings.HasPrefix(cases[i].name, "type name of 64") || strings.HasPrefix(cases[i].name, "type prefix of 254") {
			cases[i].stricter = true // the schema's pattern has no length per part
		}
	}
	return cases
}

// TestValidateAgreesWithTheAPIServerAtEveryLimit sends each limit case to the API server (a
// dry-run status update of a custom resource whose conditions are metav1.Condition) and
// compares its verdict with Validate's: a condition Validate accepts, the API server accepts; one
// it refuses, the API server refuses, except the stricter cases listed. And a condition Validate
// accepts costs no allocation: the rules are checked without falling back to the API server's
// validation code.
func TestValidateAgreesWithTheAPIServerAtEveryLimit(t *testing.T) {
	ctx := t.Context()
	c := env.Client()
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: env.Namespace(t)}}
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	for _, lc := range limitCases() {
		probe := w.DeepCopy()
		probe.Status.Conditions = []metav1.Condition{lc.c}
		serverErr := c.Status().Update(ctx, probe, client.DryRunAll)
		ours := conditions.Validate(lc.c)
		switch {
		case ours == nil && serverErr != nil:
			t.Errorf("%s: Validate accepts what the API server refuses: %v", lc.name, serverErr)
		case ours != nil && serverErr == nil && !lc.stricter:
			t.Errorf("%s: Validate refuses what the API server accepts: %v", lc.name, ours)
		case ours == nil && serverErr == nil && lc.stricter:
			t.Errorf("%s: listed as refused by Validate only, but both accept it", lc.name)
		case ours != nil && !strings.Contains(ours.Error(), lc.c.Type) && lc.c.Type != "":
			t.Errorf("%s: the error does not name the condition: %v", lc.name, ours)
		}
		if ours == nil {
			if allocs := testing.AllocsPerRun(10, func() { _ = conditions.Validate(lc.c) }); allocs != 0 {
				t.Errorf("%s: Validate of a valid condition allocates %v times", lc.name, allocs)
			}
		}
	}
}
