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

// Package names tells, without regular expressions, the names Kubernetes accepts as label
// values and qualified names (finalizers, label keys), for the checks tenon makes on every
// reconcile. Each function reports exactly what apimachinery's validation reports (its tests
// compare them); callers ask apimachinery for the message when a name is not valid.
package names

// IsLabelValue reports whether s is a valid label value: empty, or at most 63 alphanumeric
// characters, '-', '_' or '.', beginning and ending with an alphanumeric one.
func IsLabelValue(s string) bool {
	return s == "" || isNamePart(s)
}

// IsQualifiedName reports whether s is a qualified name (a finalizer, a label key): a name
// part as [IsLabelValue] describes it, not empty, optionally after a DNS subdomain (RFC 1123)
// and a '/'.
func IsQualifiedName(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return isSubdomain(s[:i]) && isNamePart(s[i+1:])
		}
	}
	return isNamePart(s)
}

// isNamePart reports whether s is 1 to 63 alphanumeric characters, '-', '_' or '.', beginning
// and ending with an alphanumeric one.
func isNamePart(s string) bool {
	if s == "" || len(s) > 63 || !isAlphanumeric(s[0]) || !isAlphanumeric(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlphanumeric(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// isSubdomain reports whether s is a DNS subdomain (RFC 1123): at most 253 characters, labels
// of lower case letters, digits and '-', each beginning and ending with a letter or digit,
// joined by dots.
func isSubdomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			if c := s[i]; !isLowerOrDigit(c) && c != '-' {
				return false
			}
			continue
		}
		label := s[start:i]
		if label == "" || !isLowerOrDigit(label[0]) || !isLowerOrDigit(label[len(label)-1]) {
			return false
		}
		start = i + 1
	}
	return true
}

func isAlphanumeric(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isLowerOrDigit(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}
