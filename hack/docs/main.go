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

// Command docs keeps the code in tenon's Markdown guides true to compiled sources. A fenced Go
// block preceded by a snippet directive is the text of a declaration in a Go file of the
// repository:
//
//	<!-- snippet: conditions/example_test.go ExampleSummary body -->
//	```go
//	...replaced by the body of ExampleSummary...
//	```
//
// The directive names a file relative to the repository root, optionally a declaration in it (a
// function, a method as Type.Method, or a type), and optionally "body" for a function's body
// only. Without a declaration the whole file is used, without its license header.
//
// Usage, from this directory:
//
//	go run . -root ../.. -check   # report blocks that differ from their sources; exit 1 if any
//	go run . -root ../..          # rewrite the blocks from their sources
//	go run . -root ../.. -compile # compile every Go block of the guides outside tenon
//	go run . -root ../.. -doclinks # report doc links of the library that do not resolve
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

var directive = regexp.MustCompile(`^<!-- snippet: (\S+)(?: (\S+))?(?: (body))? -->$`)

func main() {
	root := flag.String("root", ".", "repository root")
	check := flag.Bool("check", false, "only report blocks that differ from their sources")
	compile := flag.Bool("compile", false, "compile every Go block of the guides outside tenon (see compile.go)")
	doclinks := flag.Bool("doclinks", false, "report doc links of the library that do not render as links (see doclinks.go)")
	flag.Parse()
	if *doclinks {
		if err := checkDocLinks(*root); err != nil {
			fmt.Fprintln(os.Stderr, "docs:", err)
			os.Exit(1)
		}
		return
	}
	if *compile {
		if err := compileAll(*root); err != nil {
			fmt.Fprintln(os.Stderr, "docs:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*root, *check); err != nil {
		fmt.Fprintln(os.Stderr, "docs:", err)
		os.Exit(1)
	}
}

func run(root string, check bool) error {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bin" || d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var stale []string
	snippets := 0
	for _, f := range files {
		n, changed, err := process(root, f, check)
		if err != nil {
			return err
		}
		snippets += n
		if changed {
			stale = append(stale, f)
		}
	}
	if check && len(stale) > 0 {
		return fmt.Errorf("snippets differ from their sources in %s; run make docs", strings.Join(stale, ", "))
	}
	verb := "checked"
	if !check {
		verb = "updated"
	}
	fmt.Printf("docs: %s %d snippets in %d Markdown files\n", verb, snippets, len(files))
	return nil
}

// process replaces the snippet blocks of one Markdown file, or in check mode reports whether any
// differs. It returns the number of snippets.
func process(root, path string, check bool) (int, bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false, err
	}
	lines := strings.Split(string(data), "\n")
	var out []string
	count := 0
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i])
		m := directive.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		count++
		if i+1 >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "```") {
			return 0, false, fmt.Errorf("%s:%d: a snippet directive must be followed by a fenced code block", path, i+1)
		}
		end := i + 2
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		if end == len(lines) {
			return 0, false, fmt.Errorf("%s:%d: unterminated code block", path, i+2)
		}
		code, err := extract(filepath.Join(root, m[1]), m[2], m[3] == "body")
		if err != nil {
			return 0, false, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		out = append(out, lines[i+1])
		out = append(out, strings.Split(code, "\n")...)
		out = append(out, lines[end])
		i = end
	}
	updated := strings.Join(out, "\n")
	if updated == string(data) {
		return count, false, nil
	}
	if check {
		return count, true, nil
	}
	return count, true, os.WriteFile(path, []byte(updated), 0o644)
}

// extract returns the source of declaration name in file (the whole file when name is empty),
// or only its body. name may list several declarations, separated by commas: their sources are
// joined with a blank line, in the order given, so a guide can show the types its other blocks
// use.
func extract(file, name string, body bool) (string, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		return "", err
	}
	if name == "" {
		// The whole file from the package clause on: the license header is noise in a guide.
		start := fset.Position(f.Package).Offset
		return strings.TrimRight(string(src[start:]), "\n"), nil
	}
	var parts []string
	for _, n := range strings.Split(name, ",") {
		decl := findDecl(f, n)
		if decl == nil {
			return "", fmt.Errorf("%s has no declaration %s", file, n)
		}
		if d, ok := decl.(*ast.FuncDecl); ok && body {
			inner := string(src[fset.Position(d.Body.Lbrace).Offset+1 : fset.Position(d.Body.Rbrace).Offset])
			parts = append(parts, dedent(strings.Trim(inner, "\n")))
			continue
		}
		parts = append(parts, string(src[fset.Position(decl.Pos()).Offset:fset.Position(decl.End()).Offset]))
	}
	return strings.Join(parts, "\n\n"), nil
}

// findDecl returns the declaration of name in f: a function, a method as Type.Method, or the
// type, const or var declaration that declares name.
func findDecl(f *ast.File, name string) ast.Decl {
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if funcName(d) == name {
				return d
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.Name == name {
						return d
					}
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if id.Name == name {
							return d
						}
					}
				}
			}
		}
	}
	return nil
}

// funcName returns "Name" for a function and "Type.Name" for a method.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if idx, ok := t.(*ast.IndexExpr); ok {
		t = idx.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + d.Name.Name
	}
	return d.Name.Name
}

// dedent removes the indentation common to every non-empty line.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	prefix := ""
	first := true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first || !strings.HasPrefix(indent, prefix) {
			if first {
				prefix = indent
			} else {
				prefix = commonPrefix(prefix, indent)
			}
			first = false
		}
	}
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, prefix)
	}
	return strings.Join(lines, "\n")
}

func commonPrefix(a, b string) string {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return a[:i]
		}
	}
	return a[:n]
}
