package report

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"

	"github.com/perfdag/perfdag/steps/testkit"
)

// randomDoc lays out a document of random paragraphs, headings, spaces and table rows of the
// heights the report's pages produce, then a second titled page; it returns the titles of the
// pages it started, in order.
func randomDoc(rng *rand.Rand) (*doc, []string) {
	d := newDoc("t", "c", func(s string) string { return s })
	titles := []string{"Section A", "Section B"}
	d.newPage(titles[0])
	for i := 0; i < 60; i++ {
		switch rng.Intn(6) {
		case 0:
			d.para(strings.Repeat("word ", 1+rng.Intn(60)), bodySize, fontstyle.Normal, nil)
		case 1:
			d.heading("Heading")
		case 2:
			d.space(float64(1 + rng.Intn(3)))
		default:
			d.table([]tcol{{head: "H", w: 20}, {head: "V", w: 20}}, nil,
				[][]tcell{{plain("x"), plain(strings.Repeat("word ", 1+rng.Intn(40)))}})
		}
	}
	d.newPage(titles[1])
	d.para("The end.", bodySize, fontstyle.Normal, nil)
	return d, titles
}

// TestPagesLandOnTheirPhysicalPage: every page the layout starts is exactly one physical page
// of the PDF, whatever the row heights add up to. maroto ends a page with a filler row that
// reaches gofpdf's page-break line; when the rounding error of the row heights' sum put it a
// hair past the line, gofpdf broke the page early and every later page slid down one: footers
// off by one, title bands at the bottom of the previous page, a blank page (document 13 of seed
// 1 did before row heights were rounded to rowUnit; so did one report of a real campaign).
func TestPagesLandOnTheirPhysicalPage(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	dir := t.TempDir()
	for k := 0; k < 120; k++ {
		d, titles := randomDoc(rng)
		out, err := d.m.Generate()
		if err != nil {
			t.Fatal(err)
		}
		b := out.GetBytes()
		got := PageCount(b)
		if got != d.pages {
			t.Errorf("document %d: %d physical pages for %d laid-out pages", k, got, d.pages)
		}
		if got != d.pages || k%30 == 13 { // read the footers and title bands as a reader would
			p := filepath.Join(dir, fmt.Sprintf("d%d.pdf", k))
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			checkPhysicalPages(t, p, titles)
		}
	}
}

var footerRe = regexp.MustCompile(`page (\d+) of (\d+)`)

// checkPhysicalPages reads pdf as a reader does, one physical page at a time with pdftotext:
// page i of N carries the footer "page i of N" (N the physical page count) and opens with the
// title band of its page, titles being the report's pages in order (a continuation repeats
// its title with "(continued)").
func checkPhysicalPages(t *testing.T, pdf string, titles []string) {
	t.Helper()
	bin := testkit.NeedTool(t, "pdftotext")
	b, err := os.ReadFile(pdf)
	if err != nil {
		t.Fatal(err)
	}
	n := PageCount(b)
	if n == 0 {
		t.Fatalf("%s: no page count", pdf)
	}
	next := 0 // index in titles of the next page that is not a continuation
	for i := 1; i <= n; i++ {
		out, err := exec.Command(bin, "-f", strconv.Itoa(i), "-l", strconv.Itoa(i), "-layout", pdf, "-").Output()
		if err != nil {
			t.Fatalf("pdftotext -f %d %s: %v", i, pdf, err)
		}
		text := strings.TrimSpace(string(out))
		first, _, _ := strings.Cut(text, "\n")
		first = strings.TrimSpace(first)
		want := fmt.Sprintf("page %d of %d", i, n)
		if got := footerRe.FindAllString(strings.Join(strings.Fields(text), " "), -1); len(got) != 1 || got[0] != want {
			t.Errorf("%s: physical page %d has footers %q, want %q", filepath.Base(pdf), i, got, want)
		}
		switch {
		case next < len(titles) && first == titles[next]:
			next++
		case next > 0 && first == titles[next-1]+" (continued)":
		default:
			exp := "the end of the report"
			if next < len(titles) {
				exp = fmt.Sprintf("%q", titles[next])
			}
			if next > 0 {
				exp += fmt.Sprintf(" or %q", titles[next-1]+" (continued)")
			}
			t.Errorf("%s: physical page %d opens with %q, want %s", filepath.Base(pdf), i, first, exp)
		}
	}
	if next != len(titles) {
		t.Errorf("%s: pages %q have no physical page of their own", filepath.Base(pdf), titles[next:])
	}
}
