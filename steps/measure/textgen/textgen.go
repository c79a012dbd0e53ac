// Package textgen writes readable, varied English prose from a seeded sentence grammar over
// embedded word lists (engineering, science, history, nature, economics, ...). perfdag uses it
// for prompts that read like real text without downloading or shipping any corpus; the same
// seed always yields the same text, on every platform and Go version.
package textgen

import (
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
)

// vocab is one topic's parsed word lists.
type vocab struct {
	name     string
	nouns    []noun
	agents   []noun
	adjs     []string
	verbs    []verb
	abstract []string
	places   []string
}

// lexicon is every list the grammar reads, parsed once from words.go; it is never modified.
type lexicon struct {
	topics       []vocab
	causal       []verb
	report       []string
	linkPast     []string
	linkPres     []string
	adverbs      []string
	connectors   []string
	evaluations  []string
	modals       []string
	times        []string
	prepositions []string
	first, last  []string
	numbers      []string
	absAdjs      []string
	locVerbs     []string
}

var lex = buildLexicon()

func buildLexicon() *lexicon {
	l := &lexicon{
		causal:       parseVerbs(causalVerbs),
		report:       strings.Fields(reportVerbs),
		linkPast:     strings.Fields(linkPast),
		linkPres:     strings.Fields(linkPresSing),
		adverbs:      strings.Fields(adverbs),
		connectors:   strings.Split(connectors, "|"),
		evaluations:  strings.Split(evaluations, "|"),
		modals:       strings.Fields(modals),
		times:        strings.Split(timePhrases, "|"),
		prepositions: strings.Fields(prepositions),
		first:        strings.Fields(firstNames),
		last:         strings.Fields(lastNames),
		numbers:      strings.Fields(numberWords),
		absAdjs:      strings.Fields("high low uneven unusual critical excessive modest steady limited considerable uncertain decisive"),
		locVerbs:     strings.Fields("stood lay waited remained"),
	}
	for _, t := range topicTable {
		l.topics = append(l.topics, vocab{
			name:     t.name,
			nouns:    parseNouns(t.nouns),
			agents:   parseNouns(t.agents),
			adjs:     strings.Fields(t.adjs),
			verbs:    parseVerbs(t.verbs),
			abstract: strings.Fields(t.abstract),
			places:   splitPlaces(t.places),
		})
	}
	return l
}

// splitPlaces reads single-word places, keeping the known two-word ones together.
func splitPlaces(s string) []string {
	s = strings.NewReplacer("data center", "data_center", "clean room", "clean_room").Replace(s)
	out := strings.Fields(s)
	for i, p := range out {
		out[i] = strings.ReplaceAll(p, "_", " ")
	}
	return out
}

// Topics lists the subjects paragraphs are drawn from, so callers can describe the text.
func Topics() []string {
	out := make([]string, len(lex.topics))
	for i, t := range lex.topics {
		out[i] = t.name
	}
	return out
}

// Generator produces prose deterministically from its seed; it is not safe for concurrent use
// (give each goroutine its own).
type Generator struct {
	src   *rand.PCG
	topic *vocab
}

// New returns a generator whose output depends only on seed.
func New(seed int64) *Generator {
	g := &Generator{src: rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)}
	g.topic = &lex.topics[g.intn(len(lex.topics))]
	return g
}

// intn returns a uniform-enough integer in [0, n) from the PCG stream. It is computed here,
// not by rand.Rand, so the sequence cannot change with the standard library's helpers.
func (g *Generator) intn(n int) int {
	hi, _ := bits.Mul64(g.src.Uint64(), uint64(n))
	return int(hi)
}

func (g *Generator) pick(list []string) string { return list[g.intn(len(list))] }

// chance is true with probability num/den.
func (g *Generator) chance(num, den int) bool { return g.intn(den) < num }

// Paragraph returns 4 to 8 sentences about one freshly chosen topic, with no trailing newline.
func (g *Generator) Paragraph() string {
	g.topic = &lex.topics[g.intn(len(lex.topics))]
	n := 4 + g.intn(5)
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.Sentence())
	}
	return b.String()
}

// Sentence returns one sentence about the current topic, capitalized and punctuated.
func (g *Generator) Sentence() string {
	return capitalize(g.expand(templates[g.intn(len(templates))]))
}

// Text returns paragraphs separated by blank lines until at least minWords words are written.
func (g *Generator) Text(minWords int) string {
	var b strings.Builder
	words := 0
	for words < minWords || b.Len() == 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		p := g.Paragraph()
		words += strings.Count(p, " ") + 1
		b.WriteString(p)
	}
	return b.String()
}

// expand replaces every {TAG} of a template with a phrase.
func (g *Generator) expand(tmpl string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		j := strings.IndexByte(tmpl[i:], '}') + i
		b.WriteString(tmpl[:i])
		b.WriteString(g.fill(tmpl[i+1 : j]))
		tmpl = tmpl[j+1:]
	}
}

// fill produces the phrase for one grammar tag.
func (g *Generator) fill(tag string) string {
	t := g.topic
	switch tag {
	case "NP":
		if g.chance(1, 2) {
			return g.nounPhrase(false, true)
		}
		return g.nounPhrase(true, true)
	case "NPs":
		return g.nounPhrase(false, true)
	case "NPp":
		return g.nounPhrase(true, true)
	case "NOUNp":
		return t.nouns[g.intn(len(t.nouns))].pl
	case "AG":
		return g.agent()
	case "AGp":
		return g.agents()
	case "PAST":
		return t.verbs[g.intn(len(t.verbs))].past
	case "BASE":
		return t.verbs[g.intn(len(t.verbs))].base
	case "PART":
		return t.verbs[g.intn(len(t.verbs))].part
	case "CPAST":
		return lex.causal[g.intn(len(lex.causal))].past
	case "CPRES3":
		return lex.causal[g.intn(len(lex.causal))].third
	case "CBASE":
		return lex.causal[g.intn(len(lex.causal))].base
	case "ADJ":
		return g.pick(t.adjs)
	case "ABS":
		return g.pick(t.abstract)
	case "ABSADJ":
		return g.pick(lex.absAdjs)
	case "ADV":
		return g.pick(lex.adverbs)
	case "PP":
		if g.chance(1, 2) {
			return g.pick(lex.times)
		}
		return g.pick(lex.prepositions) + " the " + g.pick(t.places)
	case "PLACE":
		return g.pick(t.places)
	case "PREP":
		return g.pick(lex.prepositions)
	case "CONN":
		return g.pick(lex.connectors)
	case "EVAL":
		return g.pick(lex.evaluations)
	case "ISWAS":
		return g.pick([]string{"is", "was"})
	case "MODAL":
		return g.pick(lex.modals)
	case "REPORT":
		return g.pick(lex.report)
	case "LINKP":
		return g.pick(lex.linkPast)
	case "LINK3":
		return g.pick(lex.linkPres)
	case "LOCV":
		return g.pick(lex.locVerbs)
	case "NUM":
		return g.pick(lex.numbers)
	case "YEAR":
		return strconv.Itoa(1650 + g.intn(370))
	}
	// Templates are fixed at build time; TestTemplatesUseKnownTags keeps this unreachable.
	panic("textgen: unknown template tag " + tag)
}

// nounPhrase builds "the heavy valve", "several turbines of the pump", "an ancient charter";
// an outer phrase may take an "of the ..." complement, an inner one (outer false) may not.
func (g *Generator) nounPhrase(pl, outer bool) string {
	t := g.topic
	n := t.nouns[g.intn(len(t.nouns))]
	head := n.sg
	if pl {
		head = n.pl
	}
	if g.chance(2, 5) {
		head = g.pick(t.adjs) + " " + head
	}
	var det string
	switch {
	case !outer:
		det = "the"
	case pl:
		det = g.pick([]string{"the", "the", "these", "several", "many", "some", "most of the", "both"})
	default:
		det = g.pick([]string{"the", "the", "the", "a", "this", "each", "every", "one"})
		if det == "a" {
			det = article(head)
		}
	}
	np := det + " " + head
	if outer && g.chance(1, 5) {
		np += " of " + g.nounPhrase(g.chance(1, 3), false)
	}
	return np
}

// agent is one person: a role ("the chief surveyor") or a named one ("Clara Novak").
func (g *Generator) agent() string {
	t := g.topic
	role := t.agents[g.intn(len(t.agents))].sg
	switch g.intn(5) {
	case 0:
		return g.pick(lex.first) + " " + g.pick(lex.last)
	case 1:
		return g.pick(lex.first) + " " + g.pick(lex.last) + ", " + article(role) + " " + role + ","
	case 2:
		adj := g.pick([]string{"young", "senior", "chief", "local", "visiting", "retired", "experienced"})
		return article(adj) + " " + adj + " " + role
	}
	return "the " + role
}

// agents is a group of people ("several surveyors", "the engineers").
func (g *Generator) agents() string {
	role := g.topic.agents[g.intn(len(g.topic.agents))].pl
	return g.pick([]string{"the", "several", "many", "most", "some", "a few", "the younger", "the older"}) + " " + role
}
