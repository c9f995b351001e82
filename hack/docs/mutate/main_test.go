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

package main

import (
	"os"
	"reflect"

	"path/filepath"
	"strings"
	"testing"
)

const equivalents = `# comment
requeue/merge.go:44:77 CONDITIONALS_BOUNDARY
	With equal values, the result is set
	to the value it already holds.
conditions/validate.go:90:39 CONDITIONALS_BOUNDARY
	A type that starts with "/" is refused either way.
`

// oldTable is the table as written before the equivalent column: every mutant that lived is
// listed, and conditions was run on one file.
const oldTable = `Each package as last run.

| package | killed | lived | not covered | timed out | not viable | efficacy | coverage | minutes | run on |
|---|---|---|---|---|---|---|---|---|---|
| ` + "`conditions (validate.go)`" + ` | 75 | 3 | 0 | 0 | 0 | 96.2% | 100.0% | 25 | 2026-12-03, 33fee31 |
| ` + "`requeue`" + ` | 57 | 2 | 4 | 0 | 0 | 96.6% | 93.7% | 10 | 2026-12-03, bc46c06 |

Lived in ` + "`requeue`" + `:

- merge.go:44:77 CONDITIONALS_BOUNDARY
- result.go:47:7 CONDITIONALS_BOUNDARY
`

const conditionsReport = `{"files": [
 {"file_name": "validate.go", "mutations": [
  {"type": "CONDITIONALS_BOUNDARY", "status": "LIVED", "line": 90, "column": 39},
  {"type": "CONDITIONALS_NEGATION", "status": "KILLED", "line": 90, "column": 39}]},
 {"file_name": "order.go", "mutations": [
  {"type": "CONDITIONALS_NEGATION", "status": "LIVED", "line": 61, "column": 5},
  {"type": "CONDITIONALS_NEGATION", "status": "NOT COVERED", "line": 70, "column": 5},
  {"type": "CONDITIONALS_NEGATION", "status": "TIMED OUT", "line": 71, "column": 5}]}],
 "elapsed_time": 600}`

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTheTableCountsEquivalentMutantsApartAndKeepsOtherPackagesRows(t *testing.T) {
	dir := t.TempDir()
	reports := filepath.Join(dir, "reports")
	if err := os.Mkdir(reports, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, reports, "conditions.json", conditionsReport)
	eq := write(t, dir, "equivalent.txt", equivalents)
	doc := write(t, dir, "testing.md", "# Testing\n\n"+begin+"\n"+oldTable+end+"\n\nAfter.\n")

	if err := run(reports, doc, eq, "abc1234", "2026-12-04", "gremlins"); err != nil {
		t.Fatal(err)
	}

	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	for _, want := range []string{
		// conditions ran whole: its row of one file goes, and its equivalent mutant is counted apart.
		"| `conditions` | 1 | 2 | 1 | 1 | – | 1 | 0 | 33.3% | 50.0% | 75.0% | – | 10 | 2026-12-04, abc1234 |",
		// requeue's kept row: the equivalent count comes from its old list of mutants that lived.
		"| `requeue` | 57 | 2 | 1 | 4 | – | 0 | 0 | 96.6% | 98.3% | 93.7% | – | 10 | 2026-12-03, bc46c06 |",
		"Lived in `conditions`, not known to be equivalent:\n\n- order.go:61:5 CONDITIONALS_NEGATION\n",
		"Lived in `requeue`, not known to be equivalent:\n\n- result.go:47:7 CONDITIONALS_BOUNDARY\n",
		"- `requeue/merge.go:44:77 CONDITIONALS_BOUNDARY`: With equal values, the result is set to the value it already holds.\n",
		"\nAfter.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the document lacks %q; it is:\n%s", want, got)
		}
	}
	if strings.Contains(got, "validate.go)") {
		t.Errorf("the row of conditions (validate.go) was kept:\n%s", got)
	}

	// Written again from the same reports, the table is the same: the new format reads back.
	if err := run(reports, doc, eq, "abc1234", "2026-12-04", "gremlins"); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != got {
		t.Errorf("a second run changed the document:\n%s\nwas:\n%s", again, got)
	}
}

func TestAnEquivalentMutantThatDidNotLiveFailsTheRun(t *testing.T) {
	dir := t.TempDir()
	reports := filepath.Join(dir, "reports")
	if err := os.Mkdir(reports, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, reports, "requeue.json", `{"files": [{"file_name": "merge.go", "mutations": [
	  {"type": "CONDITIONALS_BOUNDARY", "status": "KILLED", "line": 44, "column": 77}]}]}`)
	eq := write(t, dir, "equivalent.txt", equivalents)
	doc := write(t, dir, "testing.md", begin+"\n"+end+"\n")

	err := run(reports, doc, eq, "abc1234", "2026-12-04", "gremlins")

	if err == nil || !strings.Contains(err.Error(), "requeue/merge.go:44:77 CONDITIONALS_BOUNDARY") {
		t.Fatalf("want an error naming the entry that did not live, got %v", err)
	}
}

func TestAnEquivalentWithoutAReasonIsRefused(t *testing.T) {
	eq := write(t, t.TempDir(), "equivalent.txt", "requeue/merge.go:44:77 CONDITIONALS_BOUNDARY\n")

	_, err := readEquivalents(eq)

	if err == nil || !strings.Contains(err.Error(), "has no reason") {
		t.Fatalf("want an error saying the entry has no reason, got %v", err)
	}
}

func TestNotCoveredMutantsThatWereRunCountInTheSecondCoverage(t *testing.T) {
	dir := t.TempDir()
	reports := filepath.Join(dir, "reports")
	if err := os.Mkdir(reports, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, reports, "requeue.json", `{"files": [{"file_name": "merge.go", "mutations": [
	  {"type": "CONDITIONALS_BOUNDARY", "status": "LIVED", "line": 44, "column": 77},
	  {"type": "CONDITIONALS_NEGATION", "status": "KILLED", "line": 44, "column": 77},
	  {"type": "CONDITIONALS_NEGATION", "status": "NOT COVERED", "line": 67, "column": 5},
	  {"type": "CONDITIONALS_NEGATION", "status": "NOT COVERED", "line": 69, "column": 5}]}], "elapsed_time": 60}`)
	write(t, reports, "requeue.json"+uncoveredSuffix, `[
	  {"file": "merge.go", "line": 67, "column": 5, "type": "CONDITIONALS_NEGATION", "status": "KILLED"},
	  {"file": "merge.go", "line": 69, "column": 5, "type": "CONDITIONALS_NEGATION", "status": "LIVED"}]`)
	eq := write(t, dir, "equivalent.txt", equivalents)
	doc := write(t, dir, "testing.md", begin+"\n"+end+"\n")

	if err := run(reports, doc, eq, "abc1234", "2026-12-04", "gremlins"); err != nil {
		t.Fatal(err)
	}

	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| `requeue` | 1 | 1 | 1 | 2 | 1 | 0 | 0 | 50.0% | 66.7% | 50.0% | 75.0% | 1 | 2026-12-04, abc1234 |",
		"Lived in `requeue`, not known to be equivalent:\n\n- merge.go:69:5 CONDITIONALS_NEGATION\n",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the document lacks %q; it is:\n%s", want, data)
		}
	}
}

func TestApplyReplacesTheOperatorAtTheMutantsPosition(t *testing.T) {
	code := []byte("package p\n\nfunc f(a, b int) bool {\n\treturn a-b <= 0 && a != b\n}\n")
	for _, tt := range []struct {
		m    ranMutant
		want string
	}{
		{ranMutant{Line: 4, Column: 13, Type: "CONDITIONALS_BOUNDARY"}, "\treturn a-b < 0 && a != b"},
		{ranMutant{Line: 4, Column: 13, Type: "CONDITIONALS_NEGATION"}, "\treturn a-b > 0 && a != b"},
		{ranMutant{Line: 4, Column: 10, Type: "ARITHMETIC_BASE"}, "\treturn a+b <= 0 && a != b"},
		{ranMutant{Line: 4, Column: 23, Type: "CONDITIONALS_NEGATION"}, "\treturn a-b <= 0 && a == b"},
	} {
		got, err := apply(code, tt.m)
		if err != nil {
			t.Errorf("%+v: %v", tt.m, err)
			continue
		}
		if line := strings.Split(string(got), "\n")[3]; line != tt.want {
			t.Errorf("%+v: line 4 is %q, want %q", tt.m, line, tt.want)
		}
	}
	if _, err := apply(code, ranMutant{Line: 4, Column: 9, Type: "CONDITIONALS_NEGATION"}); err == nil {
		t.Error("a mutant at an identifier was applied")
	}
	if _, err := apply(code, ranMutant{Line: 4, Column: 13, Type: "INVERT_LOGICAL"}); err == nil {
		t.Error("a mutant type this command does not know was applied")
	}
}

func TestRunUncoveredRunsTheTestsAgainstEachNotCoveredMutant(t *testing.T) {
	root := t.TempDir()
	write(t, root, "go.mod", "module example.com/m\n\ngo 1.26\n")
	if err := os.Mkdir(filepath.Join(root, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "p"), "p.go", "package p\n\nfunc Max(a, b int) int {\n\tswitch {\n\tcase a > b:\n\t\treturn a\n\t}\n\treturn b\n}\n")
	write(t, filepath.Join(root, "p"), "p_test.go", "package p\n\nimport \"testing\"\n\nfunc TestMax(t *testing.T) {\n\tif Max(2, 1) != 2 || Max(1, 2) != 2 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n")
	report := write(t, root, "p.json", `{"files": [{"file_name": "p.go", "mutations": [
	  {"type": "CONDITIONALS_NEGATION", "status": "NOT COVERED", "line": 5, "column": 9},
	  {"type": "CONDITIONALS_BOUNDARY", "status": "NOT COVERED", "line": 5, "column": 9}]}]}`)

	if err := runUncovered(report, root, "p", 10); err != nil {
		t.Fatal(err)
	}

	ran, err := readUncovered(report)
	if err != nil {
		t.Fatal(err)
	}
	want := []ranMutant{
		{File: "p.go", Line: 5, Column: 9, Type: "CONDITIONALS_NEGATION", Status: "KILLED"},
		{File: "p.go", Line: 5, Column: 9, Type: "CONDITIONALS_BOUNDARY", Status: "LIVED"}, // Max(a, a) is a either way
	}
	if !reflect.DeepEqual(want, ran) {
		t.Errorf("runs: got %+v, want %+v", ran, want)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "p", "p.go")); !strings.Contains(string(data), "case a > b:") {
		t.Errorf("the source was changed:\n%s", data)
	}
}

func TestRunUncoveredRefusesAPackageWhoseTestsFailUnchanged(t *testing.T) {
	root := t.TempDir()
	write(t, root, "go.mod", "module example.com/m\n\ngo 1.26\n")
	if err := os.Mkdir(filepath.Join(root, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "p"), "p.go", "package p\n\nfunc One() int { return 1 }\n")
	write(t, filepath.Join(root, "p"), "p_test.go", "package p\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n\tif One() != 2 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n")
	report := write(t, root, "p.json", `{"files": []}`)

	err := runUncovered(report, root, "p", 10)

	if err == nil || !strings.Contains(err.Error(), "do not pass unchanged") {
		t.Fatalf("want an error saying the tests fail unchanged, got %v", err)
	}
}
