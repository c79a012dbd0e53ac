// Package diag carries positioned problems in a campaign file — file:line:col, a message, a
// hint — and prints them the way compilers do, with the source line and a caret, so an author
// can fix every mistake of a file from one run.
package diag

import (
	"fmt"
	"sort"
	"strings"

	"github.com/perfdag/perfdag/engine/redact"
)

// Diagnostic is one problem at one place of a file.
type Diagnostic struct {
	File    string `json:"file"`
	Line    int    `json:"line"`   // 1-based; 0 when the problem has no position
	Col     int    `json:"column"` // 1-based
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	Class   string `json:"class,omitempty"` // a named limit that was hit (limit_file_size, ...), for scripts
}

func (d *Diagnostic) Error() string {
	if d.Line == 0 {
		return fmt.Sprintf("%s: %s", d.File, d.Message)
	}
	return fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Col, d.Message)
}

// List collects every problem of a file; it is an error when non-empty.
type List []*Diagnostic

func (l List) Error() string {
	parts := make([]string, len(l))
	for i, d := range l {
		parts[i] = d.Error()
	}
	return strings.Join(parts, "\n")
}

// Add appends a problem; a URL or DSN quoted in it is redacted.
func (l *List) Add(file string, line, col int, hint, format string, args ...any) {
	*l = append(*l, &Diagnostic{File: file, Line: line, Col: col, Message: redact.String(fmt.Sprintf(format, args...)), Hint: redact.String(hint)})
}

// AddClass appends a problem of a named class (a limit), so tools can tell it apart.
func (l *List) AddClass(class, file string, line, col int, hint, format string, args ...any) {
	l.Add(file, line, col, hint, format, args...)
	(*l)[len(*l)-1].Class = class
}

// Err returns the list as an error, or nil when it is empty.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Sort orders problems by file and position and drops exact duplicates.
func (l *List) Sort() {
	sort.SliceStable(*l, func(i, j int) bool {
		a, b := (*l)[i], (*l)[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	out := (*l)[:0]
	for i, d := range *l {
		if i > 0 {
			p := out[len(out)-1]
			if p.File == d.File && p.Line == d.Line && p.Col == d.Col && p.Message == d.Message {
				continue
			}
		}
		out = append(out, d)
	}
	*l = out
}

// Format renders a problem with the offending source line and a caret under its column.
func (d *Diagnostic) Format(src []byte) string {
	var b strings.Builder
	b.WriteString(d.Error())
	b.WriteByte('\n')
	if line, ok := sourceLine(src, d.Line); ok {
		line = redact.Line(line) // same length: the caret still lines up
		num := fmt.Sprintf("%d", d.Line)
		pad := strings.Repeat(" ", len(num))
		fmt.Fprintf(&b, " %s | %s\n", num, strings.TrimRight(line, "\r"))
		caret := caretPad(line, d.Col)
		fmt.Fprintf(&b, " %s | %s^\n", pad, caret)
	}
	if d.Hint != "" {
		fmt.Fprintf(&b, "   hint: %s\n", d.Hint)
	}
	return b.String()
}

// FormatAll renders every problem of a list against the sources by file name.
func (l List) FormatAll(sources map[string][]byte) string {
	var b strings.Builder
	for _, d := range l {
		b.WriteString(d.Format(sources[d.File]))
	}
	return b.String()
}

func sourceLine(src []byte, line int) (string, bool) {
	if line <= 0 || len(src) == 0 {
		return "", false
	}
	lines := strings.Split(string(src), "\n")
	if line > len(lines) {
		return "", false
	}
	return lines[line-1], true
}

// caretPad keeps tabs so the caret lines up under the column on any terminal.
func caretPad(line string, col int) string {
	var b strings.Builder
	for i, r := range []rune(line) {
		if i >= col-1 {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// Nearest returns the candidate closest to s in edit distance, when it is close enough to be a
// plausible misspelling ("concurrency" → "concurrencies").
func Nearest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := distance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	limit := max(2, len(s)/3)
	if strings.HasPrefix(best, s) || strings.HasPrefix(s, best) {
		limit = max(limit, len(best)-len(s), len(s)-len(best))
	}
	if best == "" || bestD > limit {
		return ""
	}
	return best
}

// Closest returns up to n candidates nearest to s in edit distance, nearest first (ties in
// the candidates' order): what to offer when s names nothing, however far it is.
func Closest(s string, candidates []string, n int) []string {
	type scored struct {
		c string
		d int
	}
	low := strings.ToLower(s)
	all := make([]scored, len(candidates))
	for i, c := range candidates {
		all[i] = scored{c, distance(low, strings.ToLower(c))}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].d < all[j].d })
	out := make([]string, 0, n)
	for _, x := range all {
		if len(out) == n {
			break
		}
		out = append(out, x.c)
	}
	return out
}

// DidYouMean formats a hint naming the nearest candidate, or "" when none is close.
func DidYouMean(s string, candidates []string) string {
	if n := Nearest(s, candidates); n != "" {
		return fmt.Sprintf("did you mean %q?", n)
	}
	return ""
}

// distance is the Levenshtein edit distance.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
