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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// gremlins reports a mutant as not covered when Go's coverage profile does not show the code it
// changes run. The profile has no block for a switch's case expressions, nor for what follows a
// function literal on its line, so gremlins takes those for code no test runs even where every
// test does. runUncovered runs the package's tests against each such mutant, as gremlins runs
// the others: the file changed in a build overlay (go test -overlay), the source tree untouched.

// mutations are the replacements of gremlins v0.6.0 (internal/engine/mappings.go) for the
// mutant types make mutate runs.
var mutations = map[string]map[token.Token]token.Token{
	"ARITHMETIC_BASE": {
		token.ADD: token.SUB, token.MUL: token.QUO, token.QUO: token.MUL, token.REM: token.MUL, token.SUB: token.ADD,
	},
	"CONDITIONALS_BOUNDARY": {
		token.GEQ: token.GTR, token.GTR: token.GEQ, token.LEQ: token.LSS, token.LSS: token.LEQ,
	},
	"CONDITIONALS_NEGATION": {
		token.EQL: token.NEQ, token.GEQ: token.LSS, token.GTR: token.LEQ, token.LEQ: token.GTR, token.LSS: token.GEQ, token.NEQ: token.EQL,
	},
	"INCREMENT_DECREMENT": {token.DEC: token.INC, token.INC: token.DEC},
	"INVERT_NEGATIVES":    {token.SUB: token.ADD},
}

// ranMutant is a not-covered mutant and what its run found: KILLED, LIVED, TIMED OUT or NOT
// VIABLE (it does not compile).
type ranMutant struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Type   string `json:"type"`
	Status string `json:"status"`
}

func (m ranMutant) name() mutant {
	return mutant(fmt.Sprintf("%s:%d:%d %s", m.File, m.Line, m.Column, m.Type))
}

// uncoveredSuffix names the file of a report's not-covered mutants and their runs:
// <package>.json.uncovered next to <package>.json.
const uncoveredSuffix = ".uncovered"

// runUncovered runs the package's tests against each mutant reportPath lists as not covered and
// writes what each run found next to it. pkg is the package's directory under root. The
// package's tests run once first, unchanged: they must pass, and a mutant's run times out after
// coefficient times as long, plus 30 s to compile it (a mutant can make a test wait forever).
func runUncovered(reportPath, root, pkg string, coefficient int) error {
	rep, err := readReport(reportPath)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "mutate-uncovered-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// Interrupted, it stops the runs it started (each in its own process group) before it exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	if status, err := runTests(ctx, root, pkg, "", time.Hour); err != nil || status != "LIVED" {
		return fmt.Errorf("the tests of %s do not pass unchanged (%s): %w", pkg, status, err)
	}
	timeout := time.Duration(coefficient)*time.Since(start) + 30*time.Second
	ran := notCovered(rep)
	// Two at a time, as make mutate runs gremlins' workers.
	errs := make([]error, len(ran))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := range 2 {
		dir := filepath.Join(tmp, strconv.Itoa(w))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		wg.Go(func() {
			for i := range next {
				r := &ran[i]
				r.Status, errs[i] = runMutant(ctx, root, pkg, filepath.Join(root, pkg, r.File), *r, dir, timeout)
				if errs[i] != nil {
					errs[i] = fmt.Errorf("%s/%s: %w", pkg, r.name(), errs[i])
					continue
				}
				fmt.Printf("%11s %s/%s\n", r.Status, pkg, r.name())
			}
		})
	}
	for i := range ran {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	out, err := json.MarshalIndent(ran, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(reportPath+uncoveredSuffix, append(out, '\n'), 0o644)
}

// readReport reads gremlins' JSON report at path.
func readReport(path string) (report, error) {
	var rep report
	data, err := os.ReadFile(path)
	if err != nil {
		return rep, err
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return rep, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}

// notCovered returns the mutants of rep that gremlins did not run, as no test covers them.
func notCovered(rep report) []ranMutant {
	var ran []ranMutant
	for _, f := range rep.Files {
		for _, m := range f.Mutations {
			if m.Status == "NOT COVERED" {
				ran = append(ran, ranMutant{File: f.Name, Line: m.Line, Column: m.Column, Type: m.Type})
			}
		}
	}
	return ran
}

// runMutant writes src with m applied into dir, runs pkg's tests with it in place of src and
// returns the mutant's status.
func runMutant(ctx context.Context, root, pkg, src string, m ranMutant, dir string, timeout time.Duration) (string, error) {
	code, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	mutated, err := apply(code, m)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, "mutant.go")
	if err := os.WriteFile(file, mutated, 0o644); err != nil {
		return "", err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {abs: file}})
	if err != nil {
		return "", err
	}
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		return "", err
	}
	status, err := runTests(ctx, root, pkg, overlayFile, timeout)
	if status == "FAILED" {
		// Failed without a test failing (a control plane that did not start, a flake): once
		// more. Failing so again, the mutant breaks what the tests need to run: killed.
		if status, err = runTests(ctx, root, pkg, overlayFile, timeout); status == "FAILED" {
			status = "KILLED"
		}
	}
	return status, err
}

// runTests runs pkg's tests, with the build overlay in overlayFile when it is not "", and
// returns what happened as a mutant's status: LIVED when they pass, KILLED when a test fails or
// panics, FAILED when go test fails without either, TIMED OUT, or NOT VIABLE when the package
// does not compile.
func runTests(ctx context.Context, root, pkg, overlayFile string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := []string{"test", "-count=1"}
	if overlayFile != "" {
		args = append(args, "-overlay", overlayFile)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./"+pkg)...)
	cmd.Dir = root
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	// Its own process group, so that a timeout or an interrupt stops the test binary with it;
	// testenv stops its control plane when the test binary goes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	var exit *exec.ExitError
	out := output.String()
	switch {
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		return "TIMED OUT", nil
	case ctx.Err() != nil:
		return "", fmt.Errorf("interrupted: %w", ctx.Err())
	case err == nil:
		return "LIVED", nil
	case strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]"):
		return "NOT VIABLE", nil
	case errors.As(err, &exit) && (strings.Contains(out, "--- FAIL") || strings.Contains(out, "panic:")):
		return "KILLED", nil
	case errors.As(err, &exit):
		return "FAILED", nil
	}
	return "", fmt.Errorf("go test: %w\n%s", err, out)
}

// apply returns code with the operator at m's line and column replaced as m's type replaces it.
func apply(code []byte, m ranMutant) ([]byte, error) {
	replace, ok := mutations[m.Type]
	if !ok {
		return nil, fmt.Errorf("mutant type %s is not one this command applies", m.Type)
	}
	fset := token.NewFileSet()
	file := fset.AddFile("mutant.go", -1, len(code))
	var s scanner.Scanner
	s.Init(file, code, nil, 0)
	for {
		pos, tok, _ := s.Scan()
		if tok == token.EOF {
			return nil, fmt.Errorf("no operator at line %d, column %d", m.Line, m.Column)
		}
		p := fset.Position(pos)
		if p.Line != m.Line || p.Column != m.Column {
			continue
		}
		to, ok := replace[tok]
		if !ok {
			return nil, fmt.Errorf("%s at line %d, column %d is not an operator %s changes", tok, m.Line, m.Column, m.Type)
		}
		out := append([]byte{}, code[:p.Offset]...)
		out = append(out, to.String()...)
		return append(out, code[p.Offset+len(tok.String()):]...), nil
	}
}

// readUncovered reads the runs of a report's not-covered mutants, when there are any.
func readUncovered(reportPath string) ([]ranMutant, error) {
	data, err := os.ReadFile(reportPath + uncoveredSuffix)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ran []ranMutant
	if err := json.Unmarshal(data, &ran); err != nil {
		return nil, fmt.Errorf("%s%s: %w", reportPath, uncoveredSuffix, err)
	}
	return ran, nil
}
