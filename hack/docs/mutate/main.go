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
// from the JSON reports gremlins wrote (one file per package, <name>.json, in -in), with the
// date and commit of the run and the mutants that lived listed under it, between the markers
//
//	<!-- mutate:begin -->
//	<!-- mutate:end -->
//
// The rows of packages without a report in -in are kept as they were, so that one package can be
// run again alone (MUTATE_PACKAGES=requeue make mutate). It fails when the file has no such
// markers, or a report cannot be read.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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

// survivor is a mutant that lived.
type survivor struct {
	file         string
	line, column int
	kind         string
}

// row is one package's counts.
type row struct {
	name                                           string
	killed, lived, notCovered, timedOut, notViable int
	seconds                                        float64
	survivors                                      []survivor
	// run says when and on which commit the package was run; kept is the row's text and its
	// survivors' list as the file had them, for a package without a report this time.
	run             string
	kept, keptLived string
}

func (r row) efficacy() string {
	if r.killed+r.lived == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(r.killed)/float64(r.killed+r.lived))
}

func (r row) coverage() string {
	all := r.killed + r.lived + r.notCovered
	if all == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(r.killed+r.lived)/float64(all))
}

const (
	begin = "<!-- mutate:begin -->"
	end   = "<!-- mutate:end -->"
)

func main() {
	in := flag.String("in", "", "directory of gremlins' JSON reports, one <package>.json each")
	doc := flag.String("doc", "", "Markdown file to write the table into")
	commit := flag.String("commit", "", "commit the run was made on")
	date := flag.String("date", "", "date of the run")
	how := flag.String("how", "`make mutate`, gremlins v0.6.0, two cores", "how the run was made")
	flag.Parse()
	if err := run(*in, *doc, *commit, *date, *how); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

func run(in, doc, commit, date, how string) error {
	paths, err := filepath.Glob(filepath.Join(in, "*.json"))
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return fmt.Errorf("no reports in %s", in)
	}
	sort.Strings(paths)
	var rows []row
	for _, p := range paths {
		r, err := read(p)
		if err != nil {
			return err
		}
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
	run := fmt.Sprintf("%s, %s", date, commit)
	for i := range rows {
		rows[i].run = run
	}
	have := map[string]bool{}
	for _, r := range rows {
		have[r.name] = true
	}
	for _, r := range keptRows(block) {
		if !have[r.name] {
			rows = append(rows, r)
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	out := b + begin + "\n" + table(rows, how) + end + after
	return os.WriteFile(doc, []byte(out), 0o644)
}

// keptRows returns the rows of a table this command wrote before, block being the text between
// its markers: each package's row and its list of mutants that lived, as written.
func keptRows(block string) []row {
	var rows []row
	index := map[string]int{}
	lines := strings.Split(block, "\n")
	// A table of the first format had one date and commit for all rows, in its first line.
	run := ""
	for _, line := range lines {
		if rest, ok := strings.CutPrefix(line, "Run on "); ok {
			date, rest, _ := strings.Cut(rest, " at commit ")
			commit, _, _ := strings.Cut(rest, " ")
			run = fmt.Sprintf(" %s, %s |", date, commit)
		}
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "| `"):
			if strings.Count(line, "|") == 10 {
				line += run
			}
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
			index[name] = len(rows)
			rows = append(rows, row{name: name, kept: line})
		case strings.HasPrefix(line, "Lived in `"):
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "Lived in `"), "`")
			var list strings.Builder
			for i+1 < len(lines) && (lines[i+1] == "" || strings.HasPrefix(lines[i+1], "- ")) {
				i++
				if lines[i] != "" {
					list.WriteString(lines[i] + "\n")
				}
			}
			if j, ok := index[name]; ok {
				rows[j].keptLived = list.String()
			}
		}
	}
	return rows
}

func read(path string) (row, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return row{}, err
	}
	var rep report
	if err := json.Unmarshal(data, &rep); err != nil {
		return row{}, fmt.Errorf("%s: %w", path, err)
	}
	r := row{name: strings.TrimSuffix(filepath.Base(path), ".json"), seconds: rep.Elapsed}
	for _, f := range rep.Files {
		for _, m := range f.Mutations {
			switch m.Status {
			case "KILLED":
				r.killed++
			case "LIVED":
				r.lived++
				r.survivors = append(r.survivors, survivor{f.Name, m.Line, m.Column, m.Type})
			case "NOT COVERED":
				r.notCovered++
			case "TIMED OUT":
				r.timedOut++
			case "NOT VIABLE":
				r.notViable++
			}
		}
	}
	sort.Slice(r.survivors, func(i, j int) bool {
		a, b := r.survivors[i], r.survivors[j]
		if a.file != b.file {
			return a.file < b.file
		}
		if a.line != b.line {
			return a.line < b.line
		}
		return a.column < b.column
	})
	return r, nil
}

func table(rows []row, how string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Each package as last run (%s), with the date and commit of its run.\n\n", how)
	b.WriteString("| package | killed | lived | not covered | timed out | not viable | efficacy | coverage | minutes | run on |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		if r.kept != "" {
			b.WriteString(r.kept + "\n")
			continue
		}
		fmt.Fprintf(&b, "| `%s` | %d | %d | %d | %d | %d | %s | %s | %.0f | %s |\n", r.name, r.killed, r.lived, r.notCovered,
			r.timedOut, r.notViable, r.efficacy(), r.coverage(), r.seconds/60, r.run)
	}
	for _, r := range rows {
		switch {
		case r.keptLived != "":
			fmt.Fprintf(&b, "\nLived in `%s`:\n\n%s", r.name, r.keptLived)
		case len(r.survivors) > 0:
			fmt.Fprintf(&b, "\nLived in `%s`:\n\n", r.name)
			for _, s := range r.survivors {
				fmt.Fprintf(&b, "- %s:%d:%d %s\n", s.file, s.line, s.column, s.kind)
			}
		}
	}
	return b.String()
}
