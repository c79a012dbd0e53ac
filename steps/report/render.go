package report

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/johnfercher/maroto/v2"
	"github.com/johnfercher/maroto/v2/pkg/config"
	"github.com/johnfercher/maroto/v2/pkg/consts/pagesize"
	"github.com/johnfercher/maroto/v2/pkg/props"
	"github.com/phpdave11/gofpdf"

	"github.com/perfdag/perfdag/engine/redact"
)

// Render writes the report of in to outPath as a PDF, atomically: a temp file in the same
// directory, fsynced, then renamed, so a crash never leaves a half-written report behind.
func Render(ctx context.Context, in Input, outPath string) error {
	_, err := RenderPages(ctx, in, outPath)
	return err
}

// RenderPages is Render, returning how many pages the PDF has (pages without data are not
// pages: they are lines of the cover's contents; a long table's continuation is one).
func RenderPages(ctx context.Context, in Input, outPath string) (int, error) {
	b, err := Build(ctx, in)
	if err != nil {
		return 0, err
	}
	if err := writeAtomic(outPath, b); err != nil {
		return 0, fmt.Errorf("write report %s: %w", outPath, err)
	}
	return PageCount(b), nil
}

// pagesCount is the page tree's count as gofpdf writes it: "/Type /Pages ... /Count N".
var pagesCount = regexp.MustCompile(`/Type /Pages\s[^>]*?/Count (\d+)`)

// PageCount reads how many pages a PDF this package wrote has (0 when it cannot tell): the
// root page tree's /Count, which gofpdf writes uncompressed.
func PageCount(pdf []byte) int {
	m := pagesCount.FindSubmatch(pdf)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// Build renders the report of in to PDF bytes.
func Build(ctx context.Context, in Input) ([]byte, error) {
	v := newView(in)
	if v.covErr != nil {
		return nil, fmt.Errorf("report: atlas: %w", v.covErr)
	}
	art, err := drawCharts(ctx, v, true)
	if err != nil {
		return nil, err
	}
	campaign := v.opt.title
	if in.Campaign != nil && in.Campaign.Campaign != "" {
		campaign = in.Campaign.Campaign
	}
	redact := redactor(in)
	d := newDoc(redact(v.opt.title), campaign, redact)
	if err := emit(ctx, d, v, art); err != nil {
		return nil, err
	}
	out, err := d.m.Generate()
	if err != nil {
		return nil, fmt.Errorf("report: generate pdf: %w", err)
	}
	return out.GetBytes(), nil
}

// newDoc starts an A4 document titled title (already redacted) whose footer names campaign.
func newDoc(title, campaign string, redact func(string) string) *doc {
	measure := gofpdf.New("P", "mm", "A4", "")
	tr := measure.UnicodeTranslatorFromDescriptor("")
	cfg := config.NewBuilder().
		WithPageSize(pagesize.A4).
		WithLeftMargin(marginSide).WithRightMargin(marginSide).
		WithTopMargin(marginTop).WithBottomMargin(marginBottom).
		WithMaxGridSize(gridSize).
		WithDefaultFont(&props.Font{Family: textFamily, Size: bodySize}).
		WithCompression(true).
		WithTitle(title, true).
		WithCreator("perfdag", true).
		WithPageNumber(props.PageNumber{
			Pattern: tr(sanitizeFooter(redact("perfdag report - "+campaign))) + " - page {current} of {total}",
			Place:   props.Bottom, Size: 7, Color: &colorMuted,
		}).
		Build()
	return &doc{
		m:       maroto.New(cfg),
		measure: measure,
		tr:      tr,
		redact:  redact,
	}
}

// pages are the report's page builders in Contents order; both renderers run them.
func pages() []func(sink, *view, *artwork) {
	return []func(sink, *view, *artwork){
		coverPage, scatterPage, heatmapPage, aaPage, tpmPage, dcgmPage, rooflinePage, championPage, specPage, comparePage, frontierPage, goodputPage, trendPage,
	}
}

// emit writes every page that has data to d, in order; a page without data is one line in the
// cover's contents table, not an empty page.
func emit(ctx context.Context, d sink, v *view, art *artwork) error {
	contents := Contents(v.in)
	for i, p := range pages() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if i < len(contents) && !contents[i].HasData {
			continue
		}
		p(d, v, art)
	}
	return nil
}

// textFamily is Helvetica under a name maroto does not re-translate per call (it compares
// family names case-sensitively); doc.out translates every string once instead.
const textFamily = "Arial"

// sanitizeFooter keeps the footer one line: maroto's page-number text does not wrap.
func sanitizeFooter(s string) string {
	if len(s) > 90 {
		s = s[:87] + "..."
	}
	return strings.ReplaceAll(s, "{", "(")
}

// redactor returns a function that removes the values of the campaign's API-key environment
// variables (and any password in a URL) from every string the report writes.
func redactor(in Input) func(string) string {
	var secrets []string
	if in.Campaign != nil {
		names := make([]string, 0, len(in.Campaign.Endpoints))
		for _, e := range in.Campaign.Endpoints {
			if e.APIKeyEnv != "" {
				names = append(names, e.APIKeyEnv)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			if v := os.Getenv(n); len(v) >= 4 {
				secrets = append(secrets, v)
			}
		}
	}
	return func(s string) string {
		for _, sec := range secrets {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
		return redact.String(s)
	}
}

// safeURL drops any password and query string from a URL shown in the report.
func safeURL(raw string) string {
	raw = redact.URL(raw)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		if i := strings.IndexAny(raw, "?#"); i >= 0 {
			return raw[:i]
		}
		return raw
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

// writeAtomic writes data to path through a fsynced temp file renamed into place.
func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err = f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	if dh, derr := os.Open(dir); derr == nil {
		_ = dh.Sync()
		dh.Close()
	}
	return nil
}
