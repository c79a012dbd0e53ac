// Package plural words counts for people: "1 error", "2 errors", "0 errors" — never "1 errors"
// or "error(s)". Every CLI line, step summary and log line that counts uses it.
package plural

import "fmt"

// N is n with the noun one in the form n takes: N(1, "error") = "1 error", N(2, "error") =
// "2 errors". The plural adds "s" (or "es" after s, x, z, ch, sh; "ies" after a consonant and y).
func N(n int, one string) string { return Of(n, one, Form(one)) }

// Of is n with one or many as given, for nouns N cannot inflect: Of(2, "child", "children").
func Of(n int, one, many string) string {
	if n == 1 || n == -1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Form is the regular plural of a noun (the last word of a phrase: "failed cell" → "failed cells").
func Form(one string) string {
	n := len(one)
	switch {
	case n == 0:
		return one
	case hasSuffix(one, "s", "x", "z", "ch", "sh"):
		return one + "es"
	case n >= 2 && one[n-1] == 'y' && !isVowel(one[n-2]):
		return one[:n-1] + "ies"
	}
	return one + "s"
}

func hasSuffix(s string, suffixes ...string) bool {
	for _, x := range suffixes {
		if len(s) >= len(x) && s[len(s)-len(x):] == x {
			return true
		}
	}
	return false
}

func isVowel(b byte) bool {
	switch b {
	case 'a', 'e', 'i', 'o', 'u':
		return true
	}
	return false
}
