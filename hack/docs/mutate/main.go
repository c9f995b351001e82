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

// Command mutate writes the table of `make mutate` into a Markdown file: one row per package
// from the JSON reports gremlins wrote (one file per package in -in, named after the package
// with "+" for "/": conditions+observe.json), with the date and commit of the run, the mutants
// that lived unexplained listed under it, and the equivalent mutants of -equivalent with their
// reasons, between the markers
//
//	<!-- mutate:begin -->
//	<!-- mutate:end -->
//
// The rows of packages without a report in -in are kept as they were, so that one package can be
// run again alone (MUTATE_PACKAGES=requeue make mutate); a kept row of part of a package
// ("conditions (validate.go)") goes when the whole package has a report.
//
// An equivalent mutant is one no test can kill because the code behaves the same with it.
// -equivalent lists them, each as gremlins names it (package/file:line:column TYPE) on a line of
// its own, with the reason on the indented lines under it; lines starting with # are comments.
// A package's efficacy is given twice: as gremlins counts it, killed ÷ (killed + lived), and with
// its equivalent mutants left out.
//
// It fails when the file has no such markers, a report cannot be read, or an equivalent mutant
// of a package in -in did not live in its run (the code changed: move or drop the entry).
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// report is the part of gremlins' JSON output (internal/report/internal/structure.go of
// github.com/go-gremlins/gremlins v0.6.0) the table shows.
type report struct {
	Files []struct {
		Name      string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
	Elapsed float64 `json:"elapsed_time"`
}

// mutant is a mutant as gremlins names it in its package: "merge.go:44:77 CONDITIONALS_BOUNDARY".
type mutant string

// row is one package's counts.
type row struct {
	name                                           string
	killed, lived, notCovered, timedOut, notViable int
	// equivalent counts the mutants that lived and are listed as equivalent.
	equivalent int
	// ranUncovered counts the not-covered mutants run by runUncovered, uncoveredKilled and
	// uncoveredLived those the tests killed and those that lived.
	ranUncovered, uncoveredKilled, uncoveredLived int
	// kept is the row as a table of the current format had it, for a package without a report
	// this time.
	kept    string
	minutes float64
	// unexplained are the mutants that lived and are not listed as equivalent.
	unexplained []mutant
	// run says when and on which commit the package was run.
	run string
}

// efficacy is gremlins' test efficacy, killed ÷ (killed + lived).
func (r row) efficacy() string {
	return percent(r.killed, r.killed+r.lived)
}

// efficacyOfAll is the efficacy of every mutant run, the not-covered ones included, with the
// equivalent mutants left out.
func (r row) efficacyOfAll() string {
	killed := r.killed + r.uncoveredKilled
	return percent(killed, killed+r.lived+r.uncoveredLived-r.equivalent)
}

// percent returns n ÷ of as a percentage with one decimal, or "–" when of is 0.
func percent(n, of int) string {
	if of <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}

// coverage is gremlins' mutant coverage, (killed + lived) ÷ (killed + lived + not covered), with
// the not-covered mutants the tests killed when run counted as covered: a mutant a test kills
// is one the tests run.
func (r row) coverage(withKilled bool) string {
	covered := r.killed + r.lived
	if withKilled {
		if r.ranUncovered < r.notCovered {
			return "–"
		}
		covered += r.uncoveredKilled
	}
	return percent(covered, r.killed+r.lived+r.notCovered)
}

// equivalent is an entry of the -equivalent file.
type equivalent struct {
	pkg    string
	mutant mutant
	reason string
}

const (
	begin = "<!-- mutate:begin -->"
	end   = "<!-- mutate:end -->"
	// tableHeader is the header of the table's current format.
	tableHeader = "| package | killed | lived | equivalent | not covered | not covered, killed when run | timed out | not viable | " +
		"efficacy | efficacy of all run, equivalent left out | coverage | coverage, with those killed when run | minutes | run on |"
)

func main() {
	in := flag.String("in", "", "directory of gremlins' JSON reports, one <package>.json each")
	doc := flag.String("doc", "", "Markdown file to write the table into")
	equivalents := flag.String("equivalent", "", "file of the equivalent mutants and their reasons")
	commit := flag.String("commit", "", "commit the run was made on")
	date := flag.String("date", "", "date of the run")
	how := flag.String("how", "gremlins v0.6.0, two workers, on two cores shared with other tests", "how the run was made")
	uncovered := flag.String("run-uncovered", "", "a gremlins report whose not-covered mutants to run; with -root and -pkg")
	root := flag.String("root", "", "the module's root, for -run-uncovered")
	pkg := flag.String("pkg", "", "the package's directory under -root, for -run-uncovered")
	coefficient := flag.Int("timeout-coefficient", 10, "a mutant's run times out after this many times the package's own test run, plus 30 s to compile it, for -run-uncovered")
	flag.Parse()
	if *uncovered != "" {
		if err := runUncovered(*uncovered, *root, *pkg, *coefficient); err != nil {
			fmt.Fprintln(os.Stderr, "mutate:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*in, *doc, *equivalents, *commit, *date, *how); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

func run(in, doc, equivalentsFile, commit, date, how string) error {
	paths, err := filepath.Glob(filepath.Join(in, "*.json"))
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return fmt.Errorf("no reports in %s", in)
	}
	var eqs []equivalent
	if equivalentsFile != "" {
		if eqs, err = readEquivalents(equivalentsFile); err != nil {
			return err
		}
	}
	sort.Strings(paths)
	var rows []row
	for _, p := range paths {
		r, err := read(p, eqs)
		if err != nil {
			return err
		}
		r.run = fmt.Sprintf("%s, %s", date, commit)
		rows = append(rows, r)
	}
	text, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	b, rest, ok := strings.Cut(string(text), begin)
	block, after, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		return fmt.Errorf("%s has no %s … %s markers", doc, begin, end)
	}
	have := map[string]bool{}
	for _, r := range rows {
		have[r.name] = true
	}
	kept, err := keptRows(block, eqs)
	if err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	for _, r := range kept {
		whole, _, _ := strings.Cut(r.name, " (")
		if !have[r.name] && !have[whole] {
			rows = append(rows, r)
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	out := b + begin + "\n" + table(rows, eqs, how) + end + after
	return os.WriteFile(doc, []byte(out), 0o644)
}

// readEquivalents reads the -equivalent file.
func readEquivalents(path string) ([]equivalent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var eqs []equivalent
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		switch {
		case strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t"):
			if len(eqs) == 0 {
				return nil, fmt.Errorf("%s:%d: a reason before any mutant", path, n)
			}
			last := &eqs[len(eqs)-1]
			last.reason = strings.TrimSpace(last.reason + " " + strings.TrimSpace(line))
		default:
			name, kind, ok := strings.Cut(line, " ")
			dir, file := filepath.Split(name)
			if !ok || dir == "" || strings.Count(file, ":") != 2 {
				return nil, fmt.Errorf("%s:%d: %q is not package/file:line:column TYPE", path, n, line)
			}
			eqs = append(eqs, equivalent{pkg: strings.TrimSuffix(dir, "/"), mutant: mutant(file + " " + strings.TrimSpace(kind))})
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	for _, e := range eqs {
		if e.reason == "" {
			return nil, fmt.Errorf("%s: %s/%s has no reason", path, e.pkg, e.mutant)
		}
	}
	return eqs, nil
}

// isEquivalent reports whether m of package pkg is listed as equivalent.
func isEquivalent(eqs []equivalent, pkg string, m mutant) bool {
	whole, _, _ := strings.Cut(pkg, " (")
	return slices.ContainsFunc(eqs, func(e equivalent) bool { return e.pkg == whole && e.mutant == m })
}

// sortLived sorts r's unexplained mutants and counts its equivalent ones from all that lived.
func (r *row) sortLived(all []mutant, eqs []equivalent) {
	for _, m := range all {
		if isEquivalent(eqs, r.name, m) {
			r.equivalent++
		} else {
			r.unexplained = append(r.unexplained, m)
		}
	}
	slices.SortFunc(r.unexplained, func(a, b mutant) int { return comparePosition(string(a), string(b)) })
}

// comparePosition orders "file:line:column ..." by file, then line and column as numbers.
func comparePosition(a, b string) int {
	pa, pb := strings.Split(strings.Fields(a)[0], ":"), strings.Split(strings.Fields(b)[0], ":")
	if c := strings.Compare(pa[0], pb[0]); c != 0 {
		return c
	}
	for i := 1; i < 3; i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x - y
		}
	}
	return strings.Compare(a, b)
}

// keptRows returns the rows of a table this command wrote before, block being the text between
// its markers: each package's row, read by its header's column names, and its list of mutants
// that lived. A table written before the equivalent column existed listed every mutant that
// lived; those listed as equivalent now are counted as such.
func keptRows(block string, eqs []equivalent) ([]row, error) {
	var rows []row
	var header []string
	lived := map[string][]mutant{}
	lines := strings.Split(block, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "| package |"):
			header = cells(line)
		case strings.HasPrefix(line, "| `"):
			r, err := parseRow(header, cells(line))
			if err != nil {
				return nil, err
			}
			if slices.Equal(header, cells(tableHeader)) {
				r.kept = line
			}
			rows = append(rows, r)
		case strings.HasPrefix(line, "Lived in `"):
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "Lived in `"), "`")
			for i+1 < len(lines) && (lines[i+1] == "" || strings.HasPrefix(lines[i+1], "- ")) {
				i++
				if m, ok := strings.CutPrefix(lines[i], "- "); ok {
					lived[name] = append(lived[name], mutant(strings.Trim(m, "`")))
				}
			}
		}
	}
	for i := range rows {
		counted := rows[i].equivalent
		rows[i].equivalent = 0
		rows[i].sortLived(lived[rows[i].name], eqs)
		if counted >= 0 {
			rows[i].equivalent = counted
		}
	}
	return rows, nil
}

// cells splits a Markdown table row into its cells' text.
func cells(line string) []string {
	parts := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// parseRow reads a kept row by its header's column names; its equivalent count is -1 when the
// table had no such column.
func parseRow(header, values []string) (row, error) {
	if len(header) != len(values) {
		return row{}, fmt.Errorf("the row %q does not have the header's %d columns", strings.Join(values, " | "), len(header))
	}
	cell := map[string]string{}
	for i, h := range header {
		cell[h] = values[i]
	}
	r := row{name: strings.Trim(cell["package"], "`"), run: cell["run on"], equivalent: -1}
	var errs []error
	number := func(column string, into *int) {
		v, ok := cell[column]
		if !ok {
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("the row of %s: column %q: %w", r.name, column, err))
		}
		*into = n
	}
	number("killed", &r.killed)
	number("lived", &r.lived)
	number("equivalent", &r.equivalent)
	number("not covered", &r.notCovered)
	if v, ok := cell["not covered, killed when run"]; ok && v != "–" {
		number("not covered, killed when run", &r.uncoveredKilled)
		r.ranUncovered = r.notCovered
	}
	number("timed out", &r.timedOut)
	number("not viable", &r.notViable)
	var minutes int
	number("minutes", &minutes)
	r.minutes = float64(minutes)
	return r, errors.Join(errs...)
}

// read returns the row of the package whose gremlins report is at path, with the mutants not
// covered that were run after it; eqs must each have lived in that run.
func read(path string, eqs []equivalent) (row, error) {
	rep, err := readReport(path)
	if err != nil {
		return row{}, err
	}
	name := strings.ReplaceAll(strings.TrimSuffix(filepath.Base(path), ".json"), "+", "/")
	r := row{name: name, minutes: rep.Elapsed / 60}
	lived := r.count(rep)
	ran, err := readUncovered(path)
	if err != nil {
		return row{}, err
	}
	lived = append(lived, r.countUncovered(ran)...)
	var missing []string
	for _, e := range eqs {
		if e.pkg == name && !slices.Contains(lived, e.mutant) {
			missing = append(missing, fmt.Sprintf("%s/%s", e.pkg, e.mutant))
		}
	}
	if len(missing) > 0 {
		return row{}, fmt.Errorf("listed as equivalent but did not live in this run of %s (the code changed: correct or drop them): %s",
			name, strings.Join(missing, ", "))
	}
	r.sortLived(lived, eqs)
	return r, nil
}

// count counts the mutants of rep by status and returns those that lived.
func (r *row) count(rep report) []mutant {
	var lived []mutant
	for _, f := range rep.Files {
		for _, m := range f.Mutations {
			switch m.Status {
			case "KILLED":
				r.killed++
			case "LIVED":
				r.lived++
				lived = append(lived, mutant(fmt.Sprintf("%s:%d:%d %s", f.Name, m.Line, m.Column, m.Type)))
			case "NOT COVERED":
				r.notCovered++
			case "TIMED OUT":
				r.timedOut++
			case "NOT VIABLE":
				r.notViable++
			}
		}
	}
	return lived
}

// countUncovered counts the mutants gremlins did not cover that were run, by status, and returns
// those that lived.
func (r *row) countUncovered(ran []ranMutant) []mutant {
	var lived []mutant
	for _, m := range ran {
		r.ranUncovered++
		switch m.Status {
		case "KILLED":
			r.uncoveredKilled++
		case "LIVED":
			r.uncoveredLived++
			lived = append(lived, m.name())
		case "TIMED OUT":
			r.timedOut++
		case "NOT VIABLE":
			r.notViable++
		}
	}
	return lived
}

func table(rows []row, eqs []equivalent, how string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Each package as last run (%s), with the date and commit of its run. "+
		"Of the mutants that lived, *equivalent* ones cannot be killed (listed below with the reason); "+
		"the second efficacy counts every mutant run, the not-covered ones too, and leaves them out. "+
		"The mutants gremlins reports as not covered were run too (`go test -overlay`); the second coverage "+
		"counts those the tests killed as covered.\n\n", how)
	b.WriteString(tableHeader + "\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		if r.kept != "" {
			b.WriteString(r.kept + "\n")
			continue
		}
		killedWhenRun := "–"
		if r.ranUncovered >= r.notCovered {
			killedWhenRun = strconv.Itoa(r.uncoveredKilled)
		}
		fmt.Fprintf(&b, "| `%s` | %d | %d | %d | %d | %s | %d | %d | %s | %s | %s | %s | %.0f | %s |\n", r.name, r.killed, r.lived, r.equivalent,
			r.notCovered, killedWhenRun, r.timedOut, r.notViable, r.efficacy(), r.efficacyOfAll(), r.coverage(false), r.coverage(true),
			r.minutes, r.run)
	}
	for _, r := range rows {
		if len(r.unexplained) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\nLived in `%s`, not known to be equivalent:\n\n", r.name)
		for _, m := range r.unexplained {
			fmt.Fprintf(&b, "- %s\n", m)
		}
	}
	if len(eqs) > 0 {
		b.WriteString("\nEquivalent mutants, which no test can kill because the code behaves the same with them:\n\n")
		for _, e := range eqs {
			fmt.Fprintf(&b, "- `%s/%s`: %s\n", e.pkg, e.mutant, e.reason)
		}
	}
	return b.String()
}
