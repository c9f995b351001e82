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

package conditions

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Limits the API server enforces on conditions.
const (
	// maxMessageLength is the largest message, in bytes, the API server accepts.
	maxMessageLength = 32768

	// maxReasonLength is the longest reason the API server accepts.
	maxReasonLength = 1024

	// maxTypeLength is the longest type a custom resource's schema for metav1.Condition
	// accepts: one less than the longest qualified name (a prefix of 253, "/", a name of 63).
	maxTypeLength = 316
)

// ErrInvalid is wrapped by the errors of [Validate] for a condition the API server would reject,
// and so by those of the patch package's Helper.Patch and Applier.ApplyStatus when they refuse
// to write one; test for it with errors.Is.
var ErrInvalid = errors.New("invalid condition")

// Validate reports why the API server would reject c, or nil if it would accept it. It applies the
// rules of metav1.Condition for built-in kinds and custom resources alike: type a qualified name
// of at most 316 characters, status True, False or Unknown, reason a CamelCase word of at most
// 1024 characters, message at most 32768 bytes, observedGeneration not negative and
// lastTransitionTime set. Where the two differ, it applies the stricter rule: a custom
// resource's schema also accepts a type whose name part is longer than 63 characters, and a
// message of 32768 characters that are more bytes. The error wraps [ErrInvalid] and names each
// field and the rule it breaks, in the API server's own words.
func Validate(c metav1.Condition) error {
	if valid(&c) {
		return nil
	}
	path := field.NewPath("status", "conditions").Key(c.Type)
	errs := metav1validation.ValidateCondition(c, path)
	if len(c.Type) > maxTypeLength {
		errs = append(errs, field.TooLong(path.Child("type"), "", maxTypeLength))
	}
	if len(errs) == 0 {
		// valid and the API server's validation disagree; trust the API server.
		return nil
	}
	return fmt.Errorf("%w %q: %w", ErrInvalid, c.Type, errs.ToAggregate())
}

// valid is an allocation-free equivalent of metav1validation.ValidateCondition, so that
// validating a valid condition costs nothing; its agreement with the API server's rules is
// fuzz-tested.
func valid(c *metav1.Condition) bool {
	switch c.Status {
	case metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown:
	default:
		return false
	}
	return len(c.Type) <= maxTypeLength && validType(c.Type) &&
		validReason(c.Reason) &&
		len(c.Message) <= maxMessageLength &&
		c.ObservedGeneration >= 0 &&
		!c.LastTransitionTime.IsZero()
}

// validType reports whether t is a qualified name: [prefix/]name, the prefix a DNS-1123
// subdomain, the name at most 63 characters of [-A-Za-z0-9_.] starting and ending alphanumeric.
func validType(t string) bool {
	name := t
	if i := strings.IndexByte(t, '/'); i >= 0 {
		prefix := t[:i]
		name = t[i+1:]
		if !validSubdomain(prefix) {
			return false
		}
	}
	if name == "" || len(name) > 63 || !isAlnum(name[0]) || !isAlnum(name[len(name)-1]) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if charClass[name[i]]&(classAlpha|classDigit|classNameExtra) == 0 {
			return false
		}
	}
	return true
}

// validSubdomain reports whether s is a DNS-1123 subdomain: at most 253 characters, dot-separated
// labels of lower-case alphanumerics and '-', each starting and ending alphanumeric.
func validSubdomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || !isLowerAlnum(label[0]) || !isLowerAlnum(label[len(label)-1]) {
			return false
		}
		for i := 0; i < len(label); i++ {
			if b := label[i]; !isLowerAlnum(b) && b != '-' {
				return false
			}
		}
	}
	return true
}

// validReason reports whether r matches [A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])? and is at most
// maxReasonLength long.
func validReason(r string) bool {
	if r == "" || len(r) > maxReasonLength || !isAlpha(r[0]) {
		return false
	}
	if last := r[len(r)-1]; len(r) > 1 && !isAlnum(last) && last != '_' {
		return false
	}
	for i := 1; i < len(r); i++ {
		if charClass[r[i]]&(classAlpha|classDigit|classReasonTail) == 0 {
			return false
		}
	}
	return true
}

// Character classes, looked up in a table: validation runs on every condition a write changes.
const (
	classAlpha      = 1 << iota // A-Z a-z
	classDigit                  // 0-9
	classLower                  // a-z
	classNameExtra              // - _ . (allowed inside a qualified name)
	classReasonTail             // _ , : (allowed inside a reason)
)

var charClass = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= classAlpha | classLower
		t[c-'a'+'A'] |= classAlpha
	}
	for c := '0'; c <= '9'; c++ {
		t[c] |= classDigit
	}
	for _, c := range "-_." {
		t[c] |= classNameExtra
	}
	for _, c := range "_,:" {
		t[c] |= classReasonTail
	}
	return t
}()

func isAlpha(b byte) bool      { return charClass[b]&classAlpha != 0 }
func isAlnum(b byte) bool      { return charClass[b]&(classAlpha|classDigit) != 0 }
func isLowerAlnum(b byte) bool { return charClass[b]&(classLower|classDigit) != 0 }

// ReasonFrom turns text, typically an error message, into a valid [Reason]: the text up to its
// first colon (the outermost context of a wrapped Go error, such as "failed to create record"),
// in CamelCase, keeping ASCII letters and digits ("FailedToCreateRecord"). A result that would
// start with a digit gets the prefix "Error"; text without letters or digits gives
// [ReasonFailed]. The result is at most 128 characters. Put the full text in the message.
func ReasonFrom(text string) Reason {
	if i := strings.IndexByte(text, ':'); i >= 0 {
		text = text[:i]
	}
	const maxLen = 128
	var b strings.Builder
	upper := true
	for i := 0; i < len(text) && b.Len() < maxLen; i++ {
		c := text[i]
		switch {
		case isAlnum(c):
			if upper && c >= 'a' && c <= 'z' {
				c -= 'a' - 'A'
			}
			if b.Len() == 0 && !isAlpha(c) {
				b.WriteString("Error")
			}
			b.WriteByte(c)
			upper = false
		default:
			upper = true
		}
	}
	if b.Len() == 0 {
		return ReasonFailed
	}
	return Reason(b.String()) // at most maxLen: the loop stops there, and "Error" comes first
}

// truncateMessage returns s made safe for a condition message: invalid UTF-8 replaced by U+FFFD
// (the API server would do that on the way through JSON, and the difference would make every
// reconcile see a change), and at most maxMessageLength bytes, cut at a rune boundary and
// ending in "…" when it had to be shortened. It returns s itself when s is already safe.
func truncateMessage(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= maxMessageLength {
		return s
	}
	const ellipsis = "…"
	cut := maxMessageLength - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
