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

// Command apilist lists tenon's exported API, one line per exported identifier (a function, a
// type, a constant, a variable, a method, a struct field or an interface method), in the style
// of Go's own api/go1.txt, so that a change of the API is a change of a checked-in file:
//
//	pkg github.com/tenon-dev/tenon/conditions, func Set(Setter, metav1.Condition) (bool, error)
//
// Usage, from this directory:
//
//	go run ./apilist -root ../.. -out ../../api/exported.txt          # write the listing
//	go run ./apilist -root ../.. -out ../../api/exported.txt -check   # fail if it is stale
//
// With -check it also compares the listing with the one of the last release (the newest
// api/v*.txt) and fails when an identifier that changed since is not named in the Unreleased
// section of CHANGELOG.md, as `package.Identifier` (e.g. `conditions.Set`, `patch.Applier.Apply`).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

const module = "github.com/tenon-dev/tenon"

// packages are the public packages, relative to the repository root.
var packages = []string{
	".", "conditions", "conditions/observe", "external", "fencing", "finalizer", "ownership", "patch", "requeue",
	"sharding", "testing/faults", "testing/matchers", "testing/reconciletest", "testing/sharder", "testing/testenv",
}

func main() {
	root := flag.String("root", ".", "repository root")
	out := flag.String("out", "api/exported.txt", "the listing to write or check")
	check := flag.Bool("check", false, "fail when the listing, or the CHANGELOG, is out of date")
	flag.Parse()
	if err := run(*root, *out, *check); err != nil {
		fmt.Fprintln(os.Stderr, "apilist:", err)
		os.Exit(1)
	}
}

func run(root, out string, check bool) error {
	var lines []string
	for _, p := range packages {
		l, err := list(filepath.Join(root, p), pkgPath(p))
		if err != nil {
			return err
		}
		lines = append(lines, l...)
	}
	sort.Strings(lines)
	listing := strings.Join(lines, "\n") + "\n"
	if !check {
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, []byte(listing), 0o644)
	}
	current, err := os.ReadFile(out)
	if err != nil {
		return fmt.Errorf("failed to read the listing: %w (run make api)", err)
	}
	if string(current) != listing {
		return fmt.Errorf("%s is out of date: the exported API changed; run make api, and say what changed in CHANGELOG.md", out)
	}
	return checkChangelog(root, filepath.Dir(out), lines)
}

func pkgPath(dir string) string {
	if dir == "." {
		return module
	}
	return module + "/" + dir
}

// list returns the listing lines of the package in dir.
func list(dir, path string) ([]string, error) {
	fset := token.NewFileSet()
	//nolint:staticcheck // ParseDir ignores build tags, which the listing does not need: tenon has none.
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		return nil, fmt.Errorf("failed to parse %s: %w", dir, err)
	}
	var out []string
	add := func(format string, args ...any) {
		out = append(out, "pkg "+path+", "+fmt.Sprintf(format, args...))
	}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					if d.Recv == nil {
						add("func %s%s", d.Name.Name, signature(fset, d.Type))
						continue
					}
					recv := expr(fset, d.Recv.List[0].Type)
					if !ast.IsExported(strings.TrimLeft(baseType(recv), "*")) {
						continue
					}
					add("method (%s) %s%s", recv, d.Name.Name, signature(fset, d.Type))
				case *ast.GenDecl:
					listGen(fset, d, add)
				}
			}
		}
	}
	return out, nil
}

// listGen lists the exported types, variables and constants of d.
func listGen(fset *token.FileSet, d *ast.GenDecl, add func(string, ...any)) {
	for _, spec := range d.Specs {
		switch s := spec.(type) {
		case *ast.TypeSpec:
			if s.Name.IsExported() {
				listType(fset, s, add)
			}
		case *ast.ValueSpec:
			listValues(fset, d.Tok, s, add)
		}
	}
}

// listType lists type s: a struct with its exported fields, an interface with its methods, or
// any other type with its definition.
func listType(fset *token.FileSet, s *ast.TypeSpec, add func(string, ...any)) {
	name := s.Name.Name + typeParams(fset, s.TypeParams)
	switch t := s.Type.(type) {
	case *ast.StructType:
		add("type %s struct", name)
		for _, f := range t.Fields.List {
			for _, n := range fieldNames(f) {
				if ast.IsExported(n) {
					add("type %s struct, %s %s", s.Name.Name, n, expr(fset, f.Type))
				}
			}
		}
	case *ast.InterfaceType:
		add("type %s interface", name)
		for _, m := range t.Methods.List {
			listMethod(fset, s.Name.Name, m, add)
		}
	default:
		op := " "
		if s.Assign.IsValid() {
			op = " = "
		}
		add("type %s%s%s", name, op, expr(fset, s.Type))
	}
}

// listMethod lists method m of interface typ: with its signature when exported, an embedded
// interface by its type.
func listMethod(fset *token.FileSet, typ string, m *ast.Field, add func(string, ...any)) {
	for _, n := range fieldNames(m) {
		if ast.IsExported(n) {
			if ft, ok := m.Type.(*ast.FuncType); ok {
				add("type %s interface, %s%s", typ, n, signature(fset, ft))
			}
		} else if n != "" {
			add("type %s interface, unexported methods", typ)
		}
	}
	if len(m.Names) == 0 { // embedded
		add("type %s interface, %s", typ, expr(fset, m.Type))
	}
}

// listValues lists the exported variables or constants (tok) of s, a constant with its value.
func listValues(fset *token.FileSet, tok token.Token, s *ast.ValueSpec, add func(string, ...any)) {
	kind := "var"
	if tok == token.CONST {
		kind = "const"
	}
	for i, n := range s.Names {
		if !n.IsExported() {
			continue
		}
		line := kind + " " + n.Name
		if s.Type != nil {
			line += " " + expr(fset, s.Type)
		}
		if kind == "const" && i < len(s.Values) {
			line += " = " + expr(fset, s.Values[i])
		}
		add("%s", line)
	}
}

func fieldNames(f *ast.Field) []string {
	if len(f.Names) == 0 {
		// An embedded field is named by its type.
		return []string{strings.TrimLeft(baseType(exprString(f.Type)), "*")}
	}
	names := make([]string, len(f.Names))
	for i, n := range f.Names {
		names[i] = n.Name
	}
	return names
}

func exprString(e ast.Expr) string {
	var b bytes.Buffer
	_ = printer.Fprint(&b, token.NewFileSet(), e)
	return b.String()
}

// baseType returns the name of a type without its package and type arguments.
func baseType(t string) string {
	t = regexp.MustCompile(`\[.*\]$`).ReplaceAllString(t, "")
	if i := strings.LastIndex(t, "."); i >= 0 {
		pkg, _, _ := strings.Cut(t, ".")
		return strings.TrimLeft(pkg, "*") + t[i:]
	}
	return t
}

func expr(fset *token.FileSet, e ast.Expr) string {
	var b bytes.Buffer
	_ = printer.Fprint(&b, fset, e)
	return strings.Join(strings.Fields(b.String()), " ")
}

func typeParams(fset *token.FileSet, l *ast.FieldList) string {
	if l == nil || len(l.List) == 0 {
		return ""
	}
	var parts []string
	for _, f := range l.List {
		for _, n := range f.Names {
			parts = append(parts, n.Name+" "+expr(fset, f.Type))
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func signature(fset *token.FileSet, t *ast.FuncType) string {
	s := typeParams(fset, t.TypeParams) + "(" + params(fset, t.Params) + ")"
	if t.Results != nil && len(t.Results.List) > 0 {
		r := params(fset, t.Results)
		if len(t.Results.List) == 1 && len(t.Results.List[0].Names) <= 1 {
			s += " " + r
		} else {
			s += " (" + r + ")"
		}
	}
	return s
}

// params lists the types of a parameter list, without names, so that renaming a parameter is
// not an API change.
func params(fset *token.FileSet, l *ast.FieldList) string {
	var out []string
	for _, f := range l.List {
		n := max(len(f.Names), 1)
		for range n {
			out = append(out, expr(fset, f.Type))
		}
	}
	return strings.Join(out, ", ")
}

// checkChangelog fails when an identifier whose listing lines differ from the last release's is
// not named in the Unreleased section of CHANGELOG.md.
func checkChangelog(root, dir string, lines []string) error {
	releases, _ := filepath.Glob(filepath.Join(dir, "v*.txt"))
	if len(releases) == 0 {
		return nil
	}
	slices.SortFunc(releases, compareVersions)
	last, err := os.ReadFile(releases[len(releases)-1])
	if err != nil {
		return err
	}
	before := strings.Split(strings.TrimSpace(string(last)), "\n")
	changed := map[string]bool{}
	for _, l := range symmetricDifference(before, lines) {
		changed[identifier(l)] = true
	}
	if len(changed) == 0 {
		return nil
	}
	changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		return fmt.Errorf("failed to read CHANGELOG.md: %w", err)
	}
	unreleased := section(string(changelog), "Unreleased")
	var missing []string
	for id := range changed {
		if !strings.Contains(unreleased, id) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("the API changed since %s, but the Unreleased section of CHANGELOG.md does not say so for: %s",
			filepath.Base(releases[len(releases)-1]), strings.Join(missing, ", "))
	}
	return nil
}

func symmetricDifference(a, b []string) []string {
	in := slices.Contains[[]string]
	var out []string
	for _, s := range a {
		if !in(b, s) {
			out = append(out, s)
		}
	}
	for _, s := range b {
		if !in(a, s) {
			out = append(out, s)
		}
	}
	return out
}

var lineRE = regexp.MustCompile(`^pkg (\S+), (func|type|const|var|method \(([^)]*)\)) ([A-Za-z0-9_]+)(?:\[[^\]]*\])?(?: (?:struct|interface), ([A-Za-z0-9_]+))?`)

// identifier returns the package.Identifier a listing line is about: conditions.Set,
// patch.Applier.Apply, patch.ApplierOptions.Reader.
func identifier(line string) string {
	m := lineRE.FindStringSubmatch(line)
	if m == nil {
		return line
	}
	pkg := m[1]
	if pkg == module {
		pkg = "tenon"
	} else {
		pkg = pkg[strings.LastIndex(pkg, "/")+1:]
	}
	id := pkg + "." + m[4]
	if m[3] != "" {
		id = pkg + "." + strings.TrimLeft(regexp.MustCompile(`\[.*\]`).ReplaceAllString(m[3], ""), "*") + "." + m[4]
	}
	if m[5] != "" {
		id += "." + m[5]
	}
	return id
}

// section returns the text of the "## <name>" section of a Markdown document.
func section(doc, name string) string {
	start := strings.Index(doc, "## "+name)
	if start < 0 {
		return ""
	}
	rest := doc[start+len(name)+3:]
	if end := strings.Index(rest, "\n## "); end >= 0 {
		return rest[:end]
	}
	return rest
}

// compareVersions orders listing files by their semantic version: v0.1.0.txt before v0.10.0.txt.
func compareVersions(a, b string) int {
	parse := func(s string) []int {
		s = strings.TrimSuffix(strings.TrimPrefix(filepath.Base(s), "v"), ".txt")
		var out []int
		for _, p := range strings.Split(s, ".") {
			n := 0
			_, _ = fmt.Sscanf(p, "%d", &n)
			out = append(out, n)
		}
		return out
	}
	return slices.Compare(parse(a), parse(b))
}
