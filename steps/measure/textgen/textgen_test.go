package textgen

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/steps/testkit"
)

func TestInflection(t *testing.T) {
	cases := []struct {
		fn   func(string) string
		name string
		in   string
		want string
	}{
		{plural, "plural", "valve", "valves"},
		{plural, "plural", "lens", "lenses"},
		{plural, "plural", "box", "boxes"},
		{plural, "plural", "church", "churches"},
		{plural, "plural", "colony", "colonies"},
		{plural, "plural", "survey", "surveys"},
		{thirdPerson, "thirdPerson", "measure", "measures"},
		{thirdPerson, "thirdPerson", "study", "studies"},
		{thirdPerson, "thirdPerson", "tax", "taxes"},
		{thirdPerson, "thirdPerson", "go", "goes"},
		{thirdPerson, "thirdPerson", "survey", "surveys"},
		{pastTense, "pastTense", "measure", "measured"},
		{pastTense, "pastTense", "study", "studied"},
		{pastTense, "pastTense", "survey", "surveyed"},
		{pastTense, "pastTense", "record", "recorded"},
		{article, "article", "engineer", "an"},
		{article, "article", "heavy", "a"},
		{article, "article", "uncertain", "an"},
		{capitalize, "capitalize", "the bridge", "The bridge"},
		{capitalize, "capitalize", "In 1850", "In 1850"},
		{capitalize, "capitalize", "", ""},
	}
	for _, c := range cases {
		if got := c.fn(c.in); got != c.want {
			t.Errorf("%s(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

func TestParseIrregular(t *testing.T) {
	v := parseVerbs("build/built/built measure")
	want := []verb{{"build", "builds", "built", "built"}, {"measure", "measures", "measured", "measured"}}
	for i := range want {
		if v[i] != want[i] {
			t.Errorf("parseVerbs[%d] = %+v, want %+v", i, v[i], want[i])
		}
	}
	n := parseNouns("wolf/wolves bridge")
	if n[0] != (noun{"wolf", "wolves"}) || n[1] != (noun{"bridge", "bridges"}) {
		t.Errorf("parseNouns = %+v", n)
	}
}

// TestWordLists keeps every word plain lowercase ASCII letters: the token-budget code in
// steps/measure/workload relies on words being letter runs.
func TestWordLists(t *testing.T) {
	word := regexp.MustCompile(`^[a-z]+( [a-z]+)?$`)
	check := func(where string, ws []string) {
		if len(ws) == 0 {
			t.Errorf("%s: empty list", where)
		}
		for _, w := range ws {
			if !word.MatchString(w) {
				t.Errorf("%s: word %q is not lowercase ASCII letters", where, w)
			}
		}
	}
	for _, tp := range lex.topics {
		var ns, as, vs []string
		for _, n := range tp.nouns {
			ns = append(ns, n.sg, n.pl)
		}
		for _, n := range tp.agents {
			as = append(as, n.sg, n.pl)
		}
		for _, v := range tp.verbs {
			vs = append(vs, v.base, v.third, v.past, v.part)
		}
		check(tp.name+".nouns", ns)
		check(tp.name+".agents", as)
		check(tp.name+".verbs", vs)
		check(tp.name+".adjs", tp.adjs)
		check(tp.name+".abstract", tp.abstract)
		check(tp.name+".places", tp.places)
	}
	if got := len(Topics()); got != len(topicTable) {
		t.Errorf("Topics() has %d entries, want %d", got, len(topicTable))
	}
}

// TestSentencesWellFormed expands every template under every topic many times and checks the
// surface form: ASCII, capitalized, punctuated, single-spaced, no unfilled tag.
func TestSentencesWellFormed(t *testing.T) {
	shape := regexp.MustCompile(`^[A-Z0-9][A-Za-z0-9 ,;]*[a-z][.?]$`)
	g := New(7)
	for ti := range lex.topics {
		g.topic = &lex.topics[ti]
		for _, tmpl := range templates {
			for range 20 {
				s := capitalize(g.expand(tmpl))
				if !shape.MatchString(s) || strings.Contains(s, "  ") || strings.Contains(s, " ,") {
					t.Errorf("topic %s, template %q: malformed sentence %q", g.topic.name, tmpl, s)
				}
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	cases := []struct {
		a, b int64
		same bool
	}{
		{1, 1, true},
		{-5, -5, true},
		{1, 2, false},
		{0, 1 << 40, false},
	}
	for _, c := range cases {
		x, y := New(c.a).Text(300), New(c.b).Text(300)
		if (x == y) != c.same {
			t.Errorf("seeds %d and %d: same text = %v, want %v", c.a, c.b, x == y, c.same)
		}
	}
}

func TestParagraphShape(t *testing.T) {
	g := New(3)
	for i := range 200 {
		p := g.Paragraph()
		n := strings.Count(p, ". ") + strings.Count(p, "? ") + 1
		if n < 4 || n > 8 {
			t.Errorf("paragraph %d has %d sentences, want 4 to 8: %q", i, n, p)
		}
		if strings.Contains(p, "\n") {
			t.Errorf("paragraph %d contains a newline", i)
		}
	}
}

// TestVariety guards against a grammar that collapses onto a few sentences.
func TestVariety(t *testing.T) {
	g := New(11)
	seen := map[string]bool{}
	const n = 2000
	for range n {
		if len(seen)%50 == 0 {
			g.Paragraph() // move to another topic now and then
		}
		seen[g.Sentence()] = true
	}
	if len(seen) < n*95/100 {
		t.Errorf("%d distinct sentences out of %d, want at least 95%%", len(seen), n)
	}
}

func TestTextMinWords(t *testing.T) {
	for _, min := range []int{0, 1, 50, 1000} {
		txt := New(5).Text(min)
		if got := len(strings.Fields(txt)); got < min || txt == "" {
			t.Errorf("Text(%d) has %d words", min, got)
		}
		if strings.HasSuffix(txt, "\n") || strings.Contains(txt, "\n\n\n") {
			t.Errorf("Text(%d): bad paragraph separators", min)
		}
	}
}

// TestGolden pins the exact prose of one seed: a change to the grammar or word lists changes
// every synthetic prompt and generated dataset, so it must be a deliberate -update.
func TestGolden(t *testing.T) {
	testkit.Golden(t, filepath.Join("testdata", "seed42.golden"), []byte(New(42).Text(250)+"\n"))
}

func BenchmarkParagraph(b *testing.B) {
	g := New(1)
	bytes := 0
	for b.Loop() {
		bytes += len(g.Paragraph())
	}
	b.SetBytes(int64(bytes / max(b.N, 1)))
}
