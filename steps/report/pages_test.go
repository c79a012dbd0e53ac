package report_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/perfdag/perfdag/steps/report"
	"github.com/perfdag/perfdag/steps/testkit"
)

// TestRenderPagesCountsRealPages: the page count RenderPages returns is the PDF's (pdfinfo
// reads the same), not the number of report sections: sections without data are lines in
// the contents, not pages.
func TestRenderPagesCountsRealPages(t *testing.T) {
	tool := testkit.NeedTool(t, "pdfinfo")
	in := partialInput()
	out := filepath.Join(t.TempDir(), "r.pdf")
	pages, err := report.RenderPages(context.Background(), in, out)
	if err != nil {
		t.Fatal(err)
	}
	info, err := exec.Command(tool, out).Output()
	if err != nil {
		t.Fatalf("pdfinfo: %v", err)
	}
	m := regexp.MustCompile(`(?m)^Pages:\s+(\d+)$`).FindSubmatch(info)
	if m == nil {
		t.Fatalf("pdfinfo gives no page count:\n%s", info)
	}
	want, _ := strconv.Atoi(string(m[1]))
	if pages != want {
		t.Errorf("RenderPages = %d, pdfinfo says %d", pages, want)
	}
	sections, empty := 0, 0
	for _, p := range report.Contents(in) {
		sections++
		if !p.HasData {
			empty++
		}
	}
	if empty == 0 || pages == sections {
		t.Errorf("the fixture should have sections without data: %d pages, %d sections, %d empty", pages, sections, empty)
	}
	if report.PageCount([]byte("not a pdf")) != 0 {
		t.Error("PageCount of a non-PDF is not 0")
	}
}
