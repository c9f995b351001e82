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

package tenon_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// The reasons page (docs/reasons.md) lists every condition and Event reason tenon's packages
// write, and nothing else: a reason added to a package without its row, or a row left after its
// reason is gone, fails here.
func TestTheReasonsPageListsEveryReasonTheLibraryWritesAndNoOther(t *testing.T) {
	g := NewWithT(t)
	written, err := libraryReasons(".")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(written).To(ContainElements("Succeeded", "RetryingAfterError", "CleanupTimedOut", "CreateOutcomeUnknown"),
		"the scan of the library's sources finds the reasons it declares")

	page, err := os.ReadFile(filepath.Join("docs", "reasons.md"))
	g.Expect(err).NotTo(HaveOccurred())
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Za-z]+)` \\|").FindAllStringSubmatch(string(page), -1) {
		listed = append(listed, m[1])
	}

	for _, reason := range written {
		g.Expect(listed).To(ContainElement(reason), "reason %q is written by the library but has no row in docs/reasons.md", reason)
	}
	for _, reason := range listed {
		g.Expect(written).To(ContainElement(reason), "docs/reasons.md lists %q, which no package of the library writes", reason)
	}
}

// libraryReasons returns the reasons the library's packages declare or write as literals: the
// constants of type conditions.Reason, conversions conditions.Reason("..."), and string literals
// given as the reason of the conditions package's Mark functions or of requeue.Terminal. The test
// kit (testing/), the internal packages, the examples and hack/ are not the library.
func libraryReasons(root string) ([]string, error) {
	var reasons []string
	add := func(lit ast.Expr) {
		if b, ok := lit.(*ast.BasicLit); ok && b.Kind == token.STRING {
			if s, err := strconv.Unquote(b.Value); err == nil && s != "" && !slices.Contains(reasons, s) {
				reasons = append(reasons, s)
			}
		}
	}
	// The position of the reason among the arguments of the functions that take one.
	reasonArg := map[string]int{
		"MarkTrue": 2, "MarkFalse": 2, "MarkUnknown": 2, "MarkStalled": 1, "MarkReconciling": 1, "Terminal": 0,
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch path {
			case "examples", "hack", "internal", "testing", "bin", ".git", "api", "docs":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		isReason := func(e ast.Expr) bool {
			switch t := e.(type) {
			case *ast.Ident:
				return t.Name == "Reason" && f.Name.Name == "conditions"
			case *ast.SelectorExpr:
				x, ok := t.X.(*ast.Ident)
				return ok && x.Name == "conditions" && t.Sel.Name == "Reason"
			}
			return false
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				if n.Type != nil && isReason(n.Type) {
					for _, v := range n.Values {
						add(v)
					}
				}
			case *ast.CallExpr:
				if isReason(n.Fun) && len(n.Args) == 1 {
					add(n.Args[0])
				}
				name := ""
				switch fun := n.Fun.(type) {
				case *ast.Ident:
					name = fun.Name
				case *ast.SelectorExpr:
					name = fun.Sel.Name
				}
				if i, ok := reasonArg[name]; ok && i < len(n.Args) {
					add(n.Args[i])
				}
			}
			return true
		})
		return nil
	})
	return reasons, err
}
