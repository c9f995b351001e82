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
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The -compile mode type-checks (go vet) every Go block of the guides as a reader would paste it:
// outside tenon, against its exported API only, with nothing but what the guide shows.
//
//   - The blocks of one guide are compiled together, as one package of a temporary module that
//     requires tenon, the example operator and the getting-started project through replace
//     directives: a function body ("body" in the directive, or a block without a directive that
//     is not a list of declarations) wrapped in a function of its own, a type or a function as
//     it is. So a block may use a type an earlier block of the same guide shows, and nothing else
//     that is not exported by an importable package. Imports are added the way goimports would: each
//     package name a block uses but does not declare is imported from its source file's
//     imports, or else with the path the repository's Go files use for that name. A block that
//     uses an unexported helper of its example file, a tenon internal package or an identifier
//     that does not exist fails.
//   - A whole file (a block that starts with a package clause) is a package of its own.
//   - A method, and any declaration of the example operator, is compiled where it belongs: in its
//     source file with the declaration replaced by the block's text (go vet -overlay), since a
//     method needs its type and the example's code is in the reader's hands. Its source must be
//     outside tenon's library (an external _test package, or the example operator's module),
//     and it must not use a tenon internal package.
//
// Errors name the guide's file and line (//line directives). A fence "```go nocompile <reason>"
// skips a block that is deliberately partial; the reason is required and printed.

// internalPrefix is the import path prefix no block may use: tenon's internal packages, which a
// reader cannot import.
const internalPrefix = "github.com/tenon-dev/tenon/internal/"

// nocompile matches the fence of a block that is not compiled, and its reason.
var nocompile = regexp.MustCompile("^```go nocompile (.+)$")

// block is one Go block of a guide.
type block struct {
	md     string // the Markdown file
	line   int    // the line of the block's first code line
	src    string // the source file of the directive, "" without one
	decl   string // the declaration of the directive, "" for a whole file or without one
	body   bool   // the directive names a function body
	code   string // the block's text as the guide has it
	reason string // why it is not compiled, for a nocompile block
}

// guideFiles returns the Markdown files whose Go blocks are compiled: docs/*.md, README.md and
// examples/*/README.md.
func guideFiles(root string) ([]string, error) {
	var files []string
	for _, pattern := range []string{"docs/*.md", "README.md", "examples/*/README.md"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	return files, nil
}

// blocks returns the Go blocks of one Markdown file.
func blocks(path string) ([]block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	var out []block
	for i := 0; i < len(lines); i++ {
		fence := strings.TrimSpace(lines[i])
		if fence != "```go" && !strings.HasPrefix(fence, "```go ") {
			continue
		}
		b := block{md: path, line: i + 2}
		if m := nocompile.FindStringSubmatch(fence); m != nil {
			b.reason = m[1]
		} else if fence != "```go" {
			return nil, fmt.Errorf("%s:%d: unknown fence %q: use ```go, or ```go nocompile <reason>", path, i+1, fence)
		}
		if i > 0 {
			if m := directive.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
				b.src, b.decl, b.body = m[1], m[2], m[3] == "body"
			}
		}
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("%s:%d: unterminated code block", path, i+1)
		}
		b.code = strings.Join(lines[i+1:end], "\n")
		out = append(out, b)
		i = end
	}
	return out, nil
}

// compileAll compiles every Go block of the guides and returns an error naming each that does
// not compile.
func compileAll(root string) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	all, err := allBlocks(root)
	if err != nil {
		return err
	}
	known, err := importIndex(root)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "tenon-snippets-")
	if err != nil {
		return fmt.Errorf("failed to create the snippet module: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := writeModule(root, tmp); err != nil {
		return err
	}

	c := &compiler{root: root, tmp: tmp, known: known, guideTypes: guideTypes(root, all),
		overlays: map[string]map[string][]block{}, guides: map[string]*guide{}, seen: map[string]bool{}}
	for _, b := range all {
		if err := c.add(b); err != nil {
			return err
		}
	}
	if err := c.writeGuides(); err != nil {
		return err
	}
	c.compile()
	if len(c.problems) > 0 {
		return fmt.Errorf("the Go blocks below do not compile outside tenon:\n%s", strings.Join(c.problems, "\n"))
	}
	fmt.Printf("docs: compiled %d Go blocks alone and %d declarations in their packages, outside tenon (%d not compiled, %d duplicates)\n",
		c.standalone, c.declarations, c.skipped, c.duplicates)
	return nil
}

// allBlocks returns the Go blocks of every guide under root.
func allBlocks(root string) ([]block, error) {
	files, err := guideFiles(root)
	if err != nil {
		return nil, err
	}
	var all []block
	for _, f := range files {
		bs, err := blocks(f)
		if err != nil {
			return nil, err
		}
		all = append(all, bs...)
	}
	return all, nil
}

// guideTypes returns the types each guide shows from tenon's own example files: a method block
// of such a type is compiled with it, in the guide's package.
func guideTypes(root string, all []block) map[string]map[string]bool {
	types := map[string]map[string]bool{}
	for _, b := range all {
		if b.decl == "" || b.body || b.reason != "" || moduleOf(root, filepath.Join(root, b.src)) != root {
			continue
		}
		for _, n := range strings.Split(b.decl, ",") {
			if !strings.Contains(n, ".") {
				if types[b.md] == nil {
					types[b.md] = map[string]bool{}
				}
				types[b.md][n] = true
			}
		}
	}
	return types
}

// guide holds the standalone blocks of a guide, compiled as one package.
type guide struct {
	parts   []string
	imports map[string]string
}

// compiler gathers the blocks of the guides into the snippet module tmp (blocks compiled alone)
// and into overlays of the modules they come from (declarations compiled in place).
type compiler struct {
	root, tmp  string
	known      map[string]string          // package name → import path
	guideTypes map[string]map[string]bool // see guideTypes

	problems []string
	overlays map[string]map[string][]block // module dir → source file → declaration blocks
	guides   map[string]*guide             // the standalone blocks of each guide
	order    []string                      // the guides, in the order of their first block
	seen     map[string]bool               // declarations already added

	standalone, declarations, skipped, duplicates int
}

// add adds block b where it is compiled.
func (c *compiler) add(b block) error {
	where := fmt.Sprintf("%s:%d", rel(c.root, b.md), b.line)
	switch {
	case b.reason != "":
		c.skipped++
		fmt.Printf("docs: not compiled: %s: %s\n", where, b.reason)
		return nil
	case b.decl != "" && !b.body && !inGuidePackage(c.root, b, c.guideTypes[b.md]):
		c.addDeclaration(b, where)
		return nil
	}
	return c.addStandalone(b, where)
}

// addDeclaration adds b, a declaration of a Go file of the repository, to the overlay of its
// module, once.
func (c *compiler) addDeclaration(b block, where string) {
	key := b.src + " " + b.decl + "\n" + b.code
	if c.seen[key] {
		c.duplicates++
		return // the same declaration shown in two guides: compiled once, in place
	}
	c.seen[key] = true
	mod, problem := declarationModule(c.root, b)
	if problem != "" {
		c.problems = append(c.problems, where+": "+problem)
		return
	}
	if c.overlays[mod] == nil {
		c.overlays[mod] = map[string][]block{}
	}
	src := filepath.Join(c.root, b.src)
	c.overlays[mod][src] = append(c.overlays[mod][src], b)
	c.declarations++
}

// addStandalone adds b to the snippet module: a whole file as a package of its own, any other
// block to its guide's package.
func (c *compiler) addStandalone(b block, where string) error {
	c.standalone++
	code, imports, whole, problem := standalonePart(c.root, c.tmp, b, c.known, c.standalone)
	if problem != "" {
		c.problems = append(c.problems, where+": "+problem)
		return nil
	}
	if whole {
		return writePackage(c.tmp, fmt.Sprintf("file%03d", c.standalone), code)
	}
	g := c.guides[b.md]
	if g == nil {
		g = &guide{imports: map[string]string{}}
		c.guides[b.md] = g
		c.order = append(c.order, b.md)
	}
	for name, path := range imports {
		if other, ok := g.imports[name]; ok && other != path {
			c.problems = append(c.problems, fmt.Sprintf("%s: uses %s for %s, another block of the guide for %s", where, name, path, other))
		}
		g.imports[name] = path
	}
	g.parts = append(g.parts, code)
	return nil
}

// writeGuides writes each guide's package into the snippet module.
func (c *compiler) writeGuides() error {
	for i, md := range c.order {
		g := c.guides[md]
		if err := writePackage(c.tmp, fmt.Sprintf("guide%02d_%s", i, strings.TrimSuffix(filepath.Base(md), ".md")), guidePackage(g.parts, g.imports)); err != nil {
			return err
		}
	}
	return nil
}

// compile builds and vets the snippet module and the overlays, and adds what does not compile to
// the problems.
func (c *compiler) compile() {
	if c.standalone > 0 {
		// go build lists every type error of a package, go vet only the first.
		out, err := goCmd(c.tmp, "build", "./...")
		if err == nil {
			out, err = goCmd(c.tmp, "vet", "./...")
		}
		if err != nil {
			c.problems = append(c.problems, "blocks compiled alone:\n"+out)
		}
	}
	mods := make([]string, 0, len(c.overlays))
	for m := range c.overlays {
		mods = append(mods, m)
	}
	sort.Strings(mods)
	for _, mod := range mods {
		// Two guides that show one declaration differently (make docs -check reports it too)
		// are compiled in separate rounds: each round replaces a declaration once.
		for round, files := range rounds(c.overlays[mod]) {
			out, err := vetOverlay(c.root, c.tmp, fmt.Sprintf("%d", round), mod, files)
			if err != nil {
				c.problems = append(c.problems, fmt.Sprintf("declarations compiled in %s:\n%s", rel(c.root, mod), out))
			}
		}
	}
}

// wholeFile returns block b, a whole file, with its own imports under another package name (main
// stays main), or a problem.
func wholeFile(b block) (file, problem string) {
	f, err := parser.ParseFile(token.NewFileSet(), "", b.code, parser.PackageClauseOnly)
	if err != nil {
		return "", fmt.Sprintf("does not parse: %v", err)
	}
	if f.Name.Name != "main" {
		f.Name.Name = "snippet"
	}
	lines := strings.SplitN(b.code, "\n", 2)
	rest := ""
	if len(lines) == 2 {
		rest = lines[1]
	}
	file = "package " + f.Name.Name + "\n" + fmt.Sprintf("//line %s:%d\n", b.md, b.line+1) + rest + "\n"
	return file, checkImports(file)
}

// packagesUsed returns the packages f uses, by name: each selector X.Y whose X f does not declare
// (unresolved) and that the block's source file imports (own) or the repository does (known). bad
// names an internal package it uses, which a reader cannot import.
func packagesUsed(f *ast.File, unresolved map[string]bool, own, known map[string]string) (imports map[string]string, bad string) {
	imports = map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok || !unresolved[id.Name] {
			return true
		}
		path, ok := own[id.Name]
		if !ok {
			path, ok = known[id.Name]
		}
		if !ok {
			return true // not a package: the compiler reports it, or another block declares it
		}
		if strings.HasPrefix(path, internalPrefix) && bad == "" {
			bad = fmt.Sprintf("uses %s (%s), a tenon internal package a reader cannot import", id.Name, path)
		}
		imports[id.Name] = path
		return true
	})
	return imports, bad
}

// standalonePart returns block b, number n, as top-level Go code of its guide's package (a body
// wrapped in a function) and the imports it needs by name, or a problem. A whole file is
// returned complete, with whole true.
func standalonePart(root, tmp string, b block, known map[string]string, n int) (code string, imports map[string]string, whole bool, problem string) {
	var own map[string]string
	if b.src != "" {
		var err error
		if own, err = fileImports(filepath.Join(root, b.src)); err != nil {
			return "", nil, false, err.Error()
		}
	}
	lineDirective := fmt.Sprintf("//line %s:%d\n", b.md, b.line)
	if strings.HasPrefix(strings.TrimSpace(b.code), "package ") {
		file, problem := wholeFile(b)
		return file, nil, true, problem
	}
	var wrapped string
	if b.body || b.src == "" && !parsesAsDecls(b.code) {
		wrapped = fmt.Sprintf("func snippet%d() {\n%s%s\n}\n", n, lineDirective, b.code)
	} else {
		wrapped = fmt.Sprintf("%s%s\n", lineDirective, b.code)
	}
	f, err := parser.ParseFile(token.NewFileSet(), b.md, "package snippet\n\n"+wrapped, parser.ParseComments)
	if err != nil {
		return "", nil, false, fmt.Sprintf("does not parse: %v", err)
	}
	// goimports' logic, for what a block can use: a selector X.Y whose X the block does not
	// declare is a package. (An identifier another block of the guide declares is resolved
	// when the guide's package is compiled.)
	unresolved := map[string]bool{}
	for _, id := range f.Unresolved {
		unresolved[id.Name] = true
	}
	imports, bad := packagesUsed(f, unresolved, own, known)
	if bad != "" {
		return "", nil, false, bad
	}
	// A dot import of the source file (gomega, in tests) is added when the block uses a name it
	// brings into scope.
	if path, ok := own["."]; ok {
		names, err := exportedNames(tmp, path)
		if err != nil {
			return "", nil, false, err.Error()
		}
		for name := range unresolved {
			if names[name] {
				imports[".:"+path] = path
				break
			}
		}
	}
	return wrapped, imports, false, ""
}

// guidePackage returns the Go file of a guide's package: its blocks' code and their imports,
// or a problem when two blocks use one name for different packages.
func guidePackage(parts []string, imports map[string]string) string {
	names := make([]string, 0, len(imports))
	for name := range imports {
		names = append(names, name)
	}
	sort.Strings(names)
	var specs []string
	for _, name := range names {
		path := imports[name]
		if strings.HasPrefix(name, ".:") {
			specs = append(specs, ". "+strconv.Quote(path))
		} else if importName(path) == name {
			specs = append(specs, strconv.Quote(path))
		} else {
			specs = append(specs, name+" "+strconv.Quote(path))
		}
	}
	var out strings.Builder
	out.WriteString("package snippet\n\n")
	if len(specs) > 0 {
		out.WriteString("import (\n\t" + strings.Join(specs, "\n\t") + "\n)\n\n")
	}
	for _, p := range parts {
		out.WriteString(p + "\n")
	}
	return out.String()
}

// writePackage writes one package of the temporary module.
func writePackage(tmp, name, src string) error {
	dir := filepath.Join(tmp, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "snippet.go"), []byte(src), 0o644)
}

// parsesAsDecls reports whether code is a list of top-level declarations.
func parsesAsDecls(code string) bool {
	_, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+code, 0)
	return err == nil
}

// checkImports returns a problem when a whole file imports a tenon internal package.
func checkImports(file string) string {
	f, err := parser.ParseFile(token.NewFileSet(), "", file, parser.ImportsOnly)
	if err != nil {
		return fmt.Sprintf("does not parse: %v", err)
	}
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(path, internalPrefix) {
			return fmt.Sprintf("imports %s, a tenon internal package a reader cannot import", path)
		}
	}
	return ""
}

// declarationModule returns the directory of the module in which declaration block b is
// compiled, or a problem when its source is part of tenon's library or uses an internal package.
func declarationModule(root string, b block) (string, string) {
	src := filepath.Join(root, b.src)
	f, err := parser.ParseFile(token.NewFileSet(), src, nil, parser.ImportsOnly)
	if err != nil {
		return "", err.Error()
	}
	mod := moduleOf(root, src)
	if mod == root && !strings.HasSuffix(f.Name.Name, "_test") {
		return "", fmt.Sprintf("%s %s is in tenon's package %s, not in an external one", b.src, b.decl, f.Name.Name)
	}
	imports, err := fileImports(src)
	if err != nil {
		return "", err.Error()
	}
	for name, path := range imports {
		if strings.HasPrefix(path, internalPrefix) && regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\.`).MatchString(b.code) {
			return "", fmt.Sprintf("uses %s (%s), a tenon internal package a reader cannot import", name, path)
		}
	}
	return mod, ""
}

// inGuidePackage reports whether declaration block b is compiled in its guide's package: a
// declaration of tenon's own example files that is not a method, or a method of a type the guide
// shows.
func inGuidePackage(root string, b block, shown map[string]bool) bool {
	if moduleOf(root, filepath.Join(root, b.src)) != root {
		return false
	}
	types, methods := receivers(b.decl)
	if !methods {
		return true
	}
	for _, t := range types {
		if !shown[t] {
			return false
		}
	}
	return true
}

// moduleOf returns the directory of the module of file src: root or a module nested in it.
func moduleOf(root, src string) string {
	for dir := filepath.Dir(src); dir != root && strings.HasPrefix(dir, root); dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
	}
	return root
}

// rounds splits the declaration blocks of each source file so that no round replaces a
// declaration twice.
func rounds(files map[string][]block) []map[string][]block {
	var out []map[string][]block
	for src, bs := range files {
		used := map[int]map[string]bool{}
		for _, b := range bs {
			r := 0
			for used[r][b.decl] {
				r++
			}
			if used[r] == nil {
				used[r] = map[string]bool{}
			}
			used[r][b.decl] = true
			for len(out) <= r {
				out = append(out, map[string][]block{})
			}
			out[r][src] = append(out[r][src], b)
		}
	}
	return out
}

// vetOverlay runs go vet in module mod on the packages of the given source files, each with its
// declaration blocks put in place of the declarations they show.
func vetOverlay(root, tmp, round, mod string, files map[string][]block) (string, error) {
	replace := map[string]string{}
	pkgs := map[string]bool{}
	srcs := make([]string, 0, len(files))
	for src := range files {
		srcs = append(srcs, src)
	}
	sort.Strings(srcs)
	for i, src := range srcs {
		data, err := os.ReadFile(src)
		if err != nil {
			return "", err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, src, data, parser.ParseComments)
		if err != nil {
			return "", err
		}
		type edit struct {
			start, end int
			text       string
		}
		var edits []edit
		for _, b := range files[src] {
			if strings.Contains(b.decl, ",") {
				return fmt.Sprintf("%s:%d: several declarations in one block are compiled only in the guide's package", rel(root, b.md), b.line), fmt.Errorf("several declarations")
			}
			start, end, ok := declRange(fset, f, b.decl)
			if !ok {
				return fmt.Sprintf("%s:%d: %s has no declaration %s", rel(root, b.md), b.line, b.src, b.decl), fmt.Errorf("no declaration")
			}
			// Errors in the block name the guide's lines; the rest of the file keeps its own.
			endLine := fset.Position(token.Pos(f.FileStart) + token.Pos(end)).Line
			edits = append(edits, edit{start, end, fmt.Sprintf("\n//line %s:%d\n%s\n//line %s:%d\n", b.md, b.line, b.code, src, endLine)})
		}
		slices.SortFunc(edits, func(a, b edit) int { return b.start - a.start })
		for _, e := range edits {
			data = append(data[:e.start:e.start], append([]byte(e.text), data[e.end:]...)...)
		}
		out := filepath.Join(tmp, fmt.Sprintf("overlay-%s-%d-%d.go", round, len(mod), i))
		if err := os.WriteFile(out, data, 0o644); err != nil {
			return "", err
		}
		replace[src] = out
		dir, _ := filepath.Rel(mod, filepath.Dir(src))
		pkgs["./"+filepath.ToSlash(dir)] = true
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		return "", err
	}
	path := filepath.Join(tmp, fmt.Sprintf("overlay-%s-%d.json", round, len(mod)))
	if err := os.WriteFile(path, overlay, 0o644); err != nil {
		return "", err
	}
	args := make([]string, 0, len(pkgs))
	for p := range pkgs {
		args = append(args, p)
	}
	sort.Strings(args)
	return goCmd(mod, append([]string{"vet", "-overlay", path}, args...)...)
}

// declRange returns the byte range of declaration name in f, as extract finds it.
func declRange(fset *token.FileSet, f *ast.File, name string) (int, int, bool) {
	d := findDecl(f, name)
	if d == nil {
		return 0, 0, false
	}
	return fset.Position(d.Pos()).Offset, fset.Position(d.End()).Offset, true
}

// receivers returns the receiver types of a directive's declarations, and whether they are all
// methods.
func receivers(decl string) ([]string, bool) {
	var types []string
	for _, n := range strings.Split(decl, ",") {
		t, _, ok := strings.Cut(n, ".")
		if !ok {
			return nil, false
		}
		types = append(types, t)
	}
	return types, true
}

// exportedNames returns the exported top-level names of the package at import path, as the
// module in dir resolves it: what a dot import brings into scope.
func exportedNames(dir, path string) (map[string]bool, error) {
	out, err := goCmd(dir, "list", "-f", "{{.Dir}}", path)
	if err != nil {
		return nil, fmt.Errorf("failed to find package %s: %w: %s", path, err, out)
	}
	pkgDir := strings.TrimSpace(out)
	names := map[string]bool{}
	files, err := filepath.Glob(filepath.Join(pkgDir, "*.go"))
	if err != nil {
		return nil, err
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					names[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch sp := spec.(type) {
					case *ast.TypeSpec:
						names[sp.Name.Name] = sp.Name.IsExported()
					case *ast.ValueSpec:
						for _, id := range sp.Names {
							names[id.Name] = id.IsExported()
						}
					}
				}
			}
		}
	}
	return names, nil
}

// goCmd runs the go command in dir and returns its output.
func goCmd(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// writeModule writes the go.mod and go.sum of the temporary module: the example operator's
// requirements (a superset of tenon's and the getting-started project's), and tenon, the example
// operator and the getting-started project replaced by their directories.
func writeModule(root, dir string) error {
	example := filepath.Join(root, "examples", "cluster-operator")
	gomod, err := os.ReadFile(filepath.Join(example, "go.mod"))
	if err != nil {
		return err
	}
	var lines []string
	for _, l := range strings.Split(string(gomod), "\n") {
		switch {
		case strings.HasPrefix(l, "module "):
			l = "module example.com/snippets"
		case strings.HasPrefix(l, "replace "):
			continue
		}
		lines = append(lines, l)
	}
	gettingStarted := filepath.Join(root, "examples", "getting-started")
	lines = append(lines,
		"require github.com/tenon-dev/tenon/examples/cluster-operator v0.0.0",
		"require github.com/tenon-dev/tenon/examples/getting-started v0.0.0",
		"replace github.com/tenon-dev/tenon => "+root,
		"replace github.com/tenon-dev/tenon/examples/cluster-operator => "+example,
		"replace github.com/tenon-dev/tenon/examples/getting-started => "+gettingStarted)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	var sum []byte
	for _, f := range []string{filepath.Join(example, "go.sum"), filepath.Join(root, "go.sum")} {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		sum = append(sum, data...)
	}
	return os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644)
}

// fileImports returns the imports of a Go file by the name they are used under.
func fileImports(path string) (map[string]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := importName(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		out[name] = p
	}
	return out, nil
}

// importIndex returns, for each package name the repository's Go files import, the path they
// import under it most often: goimports' table, for blocks without a source file.
func importIndex(root string) (map[string]string, error) {
	counts := map[string]map[string]int{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bin" || d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		imports, err := fileImports(path)
		if err != nil {
			return nil // a file that does not parse is go vet's business
		}
		for name, p := range imports {
			if name == "_" || name == "." {
				continue
			}
			if counts[name] == nil {
				counts[name] = map[string]int{}
			}
			counts[name][p]++
		}
		return nil
	})
	out := map[string]string{}
	for name, paths := range counts {
		out[name] = mostUsed(paths)
	}
	return out, err
}

// mostUsed returns the path of paths counted most often, the first in order among equals.
func mostUsed(paths map[string]int) string {
	best := ""
	for p, n := range paths {
		if best == "" || n > paths[best] || n == paths[best] && p < best {
			best = p
		}
	}
	return best
}

// importName returns the name a package is used under by default: the last element of its path,
// without a major version suffix.
func importName(path string) string {
	parts := strings.Split(path, "/")
	name := parts[len(parts)-1]
	if len(parts) > 1 && regexp.MustCompile(`^v\d+$`).MatchString(name) {
		name = parts[len(parts)-2]
	}
	return strings.ReplaceAll(name, "-", "")
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}
