package textgen

import "strings"

// noun is a countable noun with both numbers spelled out.
type noun struct{ sg, pl string }

// verb is a verb with the forms the grammar conjugates.
type verb struct{ base, third, past, part string }

// parseNouns reads "sg" or "sg/pl" entries.
func parseNouns(list string) []noun {
	var out []noun
	for _, f := range strings.Fields(list) {
		sg, pl, ok := strings.Cut(f, "/")
		if !ok {
			pl = plural(sg)
		}
		out = append(out, noun{sg: sg, pl: pl})
	}
	return out
}

// parseVerbs reads "base" or "base/past/participle" entries.
func parseVerbs(list string) []verb {
	var out []verb
	for _, f := range strings.Fields(list) {
		parts := strings.Split(f, "/")
		v := verb{base: parts[0], third: thirdPerson(parts[0])}
		switch len(parts) {
		case 3:
			v.past, v.part = parts[1], parts[2]
		default:
			v.past = pastTense(parts[0])
			v.part = v.past
		}
		out = append(out, v)
	}
	return out
}

func isVowel(b byte) bool { return strings.IndexByte("aeiou", b) >= 0 }

// sibilant reports endings that take "es" in the plural and third person.
func sibilant(w string) bool {
	for _, s := range []string{"s", "x", "z", "ch", "sh"} {
		if strings.HasSuffix(w, s) {
			return true
		}
	}
	return false
}

// consonantY reports a word ending in a consonant followed by y ("study", not "survey").
func consonantY(w string) bool {
	return len(w) >= 2 && w[len(w)-1] == 'y' && !isVowel(w[len(w)-2])
}

func plural(w string) string {
	switch {
	case sibilant(w):
		return w + "es"
	case consonantY(w):
		return w[:len(w)-1] + "ies"
	}
	return w + "s"
}

func thirdPerson(w string) string {
	switch {
	case sibilant(w), strings.HasSuffix(w, "o"):
		return w + "es"
	case consonantY(w):
		return w[:len(w)-1] + "ies"
	}
	return w + "s"
}

func pastTense(w string) string {
	switch {
	case strings.HasSuffix(w, "e"):
		return w + "d"
	case consonantY(w):
		return w[:len(w)-1] + "ied"
	}
	return w + "ed"
}

// article picks "a" or "an" for the word that follows it, by its first letter.
func article(next string) string {
	if next != "" && isVowel(next[0]) {
		return "an"
	}
	return "a"
}

// capitalize upper-cases the first ASCII letter of s.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
