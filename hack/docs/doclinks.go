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
	"fmt"
	"go/ast"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The -doclinks mode reports the doc links of the library's doc comments that do not render as
// links on pkgsite: a [Name] that go/doc does not resolve in the package's scope (it stays
// literal brackets), and any doc link in a package's first sentence, its synopsis, which pkgsite
// shows as plain text in listings. go vet checks neither.

// bracketed matches what looks like a doc link in plain text, with go/doc/comment's rule that a
// link is neither preceded nor followed by a letter, digit or bracket (so map[string]any is not
// one).
var bracketed = regexp.MustCompile(`(^|[^\w\]\[])(\[\*?[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\])([^\w\[(]|$)`)

// checkDocLinks returns an error naming each unresolved doc link and each doc link in a
// package synopsis of the library under root (every package of the root module outside
// internal/, hack/ and examples/).
func checkDocLinks(root string) error {
	dirs, err := libraryDirs(root)
	if err != nil {
		return err
	}
	var problems []string
	for _, dir := range dirs {
		found, err := docLinkProblems(root, dir)
		if err != nil {
			return err
		}
		problems = append(problems, found...)
	}
	if len(problems) > 0 {
		return fmt.Errorf("doc links that do not render as links:\n%s", strings.Join(problems, "\n"))
	}
	fmt.Printf("docs: the doc links of %d packages resolve\n", len(dirs))
	return nil
}

// libraryDirs returns the sorted directories of the library's packages under root: those with
// Go files outside bin, .git, hack, examples, internal and node_modules.
func libraryDirs(root string) ([]string, error) {
	dirs := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			switch strings.Split(filepath.ToSlash(rel), "/")[0] {
			case "bin", ".git", "hack", "examples", "internal", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sorted := make([]string, 0, len(dirs))
	for d := range dirs {
		sorted = append(sorted, d)
	}
	sort.Strings(sorted)
	return sorted, nil
}

// docLinkProblems returns a line for each doc link of the package in dir that does not resolve,
// and one for a doc link in its synopsis.
func docLinkProblems(root, dir string) ([]string, error) {
	p, err := packageDoc(root, dir)
	if err != nil {
		return nil, err
	}
	parser := p.Parser()
	rel, _ := filepath.Rel(root, dir)
	var problems []string
	check := func(what, text string) {
		for _, link := range unresolved(parser.Parse(text)) {
			problems = append(problems, fmt.Sprintf("%s: %s: %s does not resolve to a declaration in scope", rel, what, link))
		}
	}
	check("package doc", p.Doc)
	if first := firstSentence(p.Doc); len(docLinks(parser.Parse(first))) > 0 {
		problems = append(problems, fmt.Sprintf("%s: the package synopsis %q has doc links, which pkgsite shows as plain text there", rel, first))
	}
	checkValues(p.Consts, p.Vars, check)
	for _, f := range p.Funcs {
		check("func "+f.Name, f.Doc)
	}
	for _, t := range p.Types {
		check("type "+t.Name, t.Doc)
		checkValues(t.Consts, t.Vars, check)
		for _, f := range t.Funcs {
			check("func "+f.Name, f.Doc)
		}
		for _, m := range t.Methods {
			check("method "+t.Name+"."+m.Name, m.Doc)
		}
		fieldDocs(t, check)
	}
	return problems, nil
}

// checkValues checks the doc comments of consts and vars.
func checkValues(consts, vars []*doc.Value, check func(what, text string)) {
	for _, c := range consts {
		check("const "+strings.Join(c.Names, ", "), c.Doc)
	}
	for _, v := range vars {
		check("var "+strings.Join(v.Names, ", "), v.Doc)
	}
}

// packageDoc returns the documentation of the package in dir, without its tests.
func packageDoc(root, dir string) (*doc.Package, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	rel, _ := filepath.Rel(root, dir)
	return doc.NewFromFiles(fset, files, "github.com/tenon-dev/tenon/"+filepath.ToSlash(rel))
}

// fieldDocs checks the doc comments of a struct type's fields.
func fieldDocs(t *doc.Type, check func(what, text string)) {
	for _, spec := range t.Decl.Specs {
		ts, ok := spec.(*ast.TypeSpec)
		if !ok {
			continue
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			continue
		}
		for _, f := range st.Fields.List {
			if f.Doc == nil || len(f.Names) == 0 {
				continue
			}
			check("field "+t.Name+"."+f.Names[0].Name, f.Doc.Text())
		}
	}
}

// firstSentence returns the first sentence of a package doc, as go/doc's synopsis takes it.
func firstSentence(text string) string {
	para, _, _ := strings.Cut(strings.TrimSpace(text), "\n\n")
	para = strings.Join(strings.Fields(para), " ")
	for i := 0; i+1 < len(para); i++ {
		if para[i] == '.' && para[i+1] == ' ' {
			return para[:i+1]
		}
	}
	return para
}

// unresolved returns the bracketed names of d's plain text: doc links go/doc did not resolve.
func unresolved(d *comment.Doc) []string {
	var out []string
	walk(d, func(t comment.Text) {
		if p, ok := t.(comment.Plain); ok {
			for _, m := range bracketed.FindAllStringSubmatch(string(p), -1) {
				out = append(out, m[2])
			}
		}
	})
	return out
}

// docLinks returns the doc links of d.
func docLinks(d *comment.Doc) []*comment.DocLink {
	var out []*comment.DocLink
	walk(d, func(t comment.Text) {
		if l, ok := t.(*comment.DocLink); ok {
			out = append(out, l)
		}
	})
	return out
}

// walk calls f for every text of d's paragraphs, headings and lists.
func walk(d *comment.Doc, f func(comment.Text)) {
	var texts func([]comment.Text)
	texts = func(ts []comment.Text) {
		for _, t := range ts {
			f(t)
			switch t := t.(type) {
			case comment.Italic:
				f(comment.Plain(t))
			case *comment.Link:
				texts(t.Text)
			case *comment.DocLink:
				texts(t.Text)
			}
		}
	}
	var blocks func([]comment.Block)
	blocks = func(bs []comment.Block) {
		for _, b := range bs {
			switch b := b.(type) {
			case *comment.Paragraph:
				texts(b.Text)
			case *comment.Heading:
				texts(b.Text)
			case *comment.List:
				for _, item := range b.Items {
					blocks(item.Content)
				}
			}
		}
	}
	blocks(d.Content)
}
