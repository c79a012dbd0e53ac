package report_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/steps/report"
)

// manyCells is partialInput with n more full cells: each adds a row to the cover's headline
// table, so a large n pushes the cover's contents table onto a second page.
func manyCells(n int) report.Input {
	in := partialInput()
	proto := in.Atlas[0]
	for i := 0; i < n; i++ {
		for _, c := range []int{1, 10} {
			r := proto
			r.CellID, r.Shape, r.Concurrency = fmt.Sprintf("cell-%02d", i), "custom", c
			r.TTFTAvgMs = f(100 + float64(10*i+c))
			r.OutputTokPerS = f(500 + float64(20*i+c))
			in.Atlas = append(in.Atlas, r)
		}
	}
	return in
}

// TestReportPagesWhenTheCoverSpills: a cover too long for one page continues on a second
// titled page, and every page after it is still its own physical page with its own footer.
func TestReportPagesWhenTheCoverSpills(t *testing.T) {
	for _, n := range []int{0, 8, 20} {
		in := manyCells(n)
		out := filepath.Join(t.TempDir(), fmt.Sprintf("cells%d.pdf", n))
		if err := report.Render(context.Background(), in, out); err != nil {
			t.Fatal(err)
		}
		var titles []string
		for _, p := range report.Contents(in) {
			if p.HasData {
				titles = append(titles, p.Title)
			}
		}
		report.CheckPhysicalPages(t, out, titles)
		if n > 0 {
			second, err := exec.Command("pdftotext", "-f", "2", "-l", "2", out, "-").Output()
			if err != nil {
				t.Fatal(err)
			}
			if want := report.TitleCover + " (continued)"; !bytesHasPrefix(second, want) {
				t.Errorf("%d cells: the cover does not spill onto page 2 (it opens %.40q), so this case tests nothing", n, second)
			}
		}
	}
}

// TestReportPagesWithAParagraphLongerThanAPage: a campaign description longer than a page
// continues over titled pages, every word of it on a page, and the pages after it keep their
// own physical pages (it was one row taller than a page: drawn past the foot of an untitled
// page, with the title bands after it on the wrong pages).
func TestReportPagesWithAParagraphLongerThanAPage(t *testing.T) {
	in := manyCells(0)
	in.Campaign.Description = strings.Repeat("lorem ipsum dolor ", 1500)
	out := filepath.Join(t.TempDir(), "long.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, p := range report.Contents(in) {
		if p.HasData {
			titles = append(titles, p.Title)
		}
	}
	report.CheckPhysicalPages(t, out, titles)
	if got := strings.Count(pdfText(t, out), "lorem"); got != 1500 {
		t.Errorf("the report holds %d of the description's 1500 words \"lorem\"", got)
	}
}

func bytesHasPrefix(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }
