package report

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html"
	"strings"

	"github.com/johnfercher/maroto/v2/pkg/consts/align"
	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"
	"github.com/johnfercher/maroto/v2/pkg/props"

	"github.com/perfdag/perfdag/steps/report/svgchart"
)

// RenderHTML writes the report of in to outPath as one self-contained HTML file (inline CSS,
// SVG charts and script; nothing is fetched when it is opened), atomically like Render.
func RenderHTML(ctx context.Context, in Input, outPath string) error {
	b, err := BuildHTML(ctx, in)
	if err != nil {
		return err
	}
	if err := writeAtomic(outPath, b); err != nil {
		return fmt.Errorf("write html report %s: %w", outPath, err)
	}
	return nil
}

// BuildHTML renders the report of in as HTML: the PDF's pages in the PDF's order, from the same
// page builders, with every chart an interactive SVG whose marks show their exact values.
func BuildHTML(ctx context.Context, in Input) ([]byte, error) {
	v := newView(in)
	if v.covErr != nil {
		return nil, fmt.Errorf("report: atlas: %w", v.covErr)
	}
	art, err := drawCharts(ctx, v, false)
	if err != nil {
		return nil, err
	}
	d := &htmlDoc{redact: redactor(in)}
	if err := emit(ctx, d, v, art); err != nil {
		return nil, err
	}
	d.closePage()
	campaign := v.opt.title
	if in.Campaign != nil && in.Campaign.Campaign != "" {
		campaign = in.Campaign.Campaign
	}
	version := ""
	if in.Run != nil && in.Run.Version != "" {
		version = " " + in.Run.Version
	}
	return d.document(v.opt.title, campaign, version), nil
}

// htmlDoc is the HTML sink: one <section> per page, tables as tables, figures as inline SVG.
// Every string passes the secret redactor, then HTML escaping, on its way in.
type htmlDoc struct {
	b      strings.Builder
	redact func(string) string
	titles []string // page titles in order, for the navigation
	open   bool
	charts int // chart figures written (legend strips are not charts)
}

// out prepares text for the page: secrets redacted, then escaped.
func (d *htmlDoc) out(s string) string { return html.EscapeString(d.redact(s)) }

func (d *htmlDoc) newPage(title string) {
	d.closePage()
	d.titles = append(d.titles, title)
	fmt.Fprintf(&d.b, "<section class=\"page\" id=\"page-%d\">\n<h2>%s</h2>\n", len(d.titles), d.out(title))
	d.open = true
}

func (d *htmlDoc) closePage() {
	if d.open {
		d.b.WriteString("</section>\n")
		d.open = false
	}
}

// para maps the PDF's point sizes onto the page's type scale.
func (d *htmlDoc) para(s string, size float64, style fontstyle.Type, clr *props.Color) {
	class := "body"
	switch {
	case size >= 16:
		class = "title"
	case size >= 11:
		class = "lead"
	case size >= 9:
		class = "strong"
	case size < 8:
		class = "note"
	}
	switch style {
	case fontstyle.Bold:
		class += " b"
	case fontstyle.Italic:
		class += " i"
	}
	fmt.Fprintf(&d.b, "<p class=\"%s\"%s>%s</p>\n", class, colorAttr("color", clr), d.out(s))
}

func (d *htmlDoc) heading(s string) { fmt.Fprintf(&d.b, "<h3>%s</h3>\n", d.out(s)) }

func (d *htmlDoc) missing(s string) { fmt.Fprintf(&d.b, "<p class=\"missing\">%s</p>\n", d.out(s)) }

func (d *htmlDoc) space(float64) {}

func (d *htmlDoc) keep(float64) {}

// images writes the figures side by side (they wrap on a narrow window); a nil figure keeps
// its column empty, so the last panel of a grid is as wide as the others.
func (d *htmlDoc) images(_ float64, figs ...*figure) {
	fmt.Fprintf(&d.b, "<div class=\"figs n%d\">\n", len(figs))
	for _, f := range figs {
		if f == nil {
			d.b.WriteString("<div></div>\n")
			continue
		}
		if f.legend != nil {
			fmt.Fprintf(&d.b, "<div class=\"legend\">%s</div>\n", svgchart.Legend(d.svgSeries(f.legend), px(float64(f.width/mmLength))))
			continue
		}
		d.charts++
		fmt.Fprintf(&d.b, "<figure class=\"chart\">%s</figure>\n", d.svg(f))
	}
	d.b.WriteString("</div>\n")
}

// table writes a table with its group header row (colspans from the PDF's column widths).
func (d *htmlDoc) table(cols []tcol, groups []tgroup, rows [][]tcell) {
	d.b.WriteString("<div class=\"tablewrap\"><table>\n<thead>\n")
	if len(groups) > 0 {
		d.b.WriteString("<tr class=\"groups\">")
		ci := 0
		for _, g := range groups {
			span, w := 0, 0
			for ci < len(cols) && w < g.w {
				w += cols[ci].w
				ci++
				span++
			}
			fmt.Fprintf(&d.b, "<th colspan=\"%d\">%s</th>", max(span, 1), d.out(g.head))
		}
		d.b.WriteString("</tr>\n")
	}
	d.b.WriteString("<tr>")
	for _, c := range cols {
		fmt.Fprintf(&d.b, "<th class=\"%s\">%s</th>", alignClass(c.align), d.out(c.head))
	}
	d.b.WriteString("</tr>\n</thead>\n<tbody>\n")
	for _, r := range rows {
		d.b.WriteString("<tr>")
		for i, c := range r {
			al := align.Left
			if i < len(cols) {
				al = cols[i].align
			}
			class := alignClass(al)
			if c.bold {
				class += " b"
			}
			exact := ""
			if c.exact != nil {
				v := svgchart.Exact(*c.exact)
				exact = fmt.Sprintf(" title=\"%s\" data-value=\"%s\"", v, v)
			}
			fmt.Fprintf(&d.b, "<td class=\"%s\"%s%s>%s</td>", class, cellStyle(c), exact, d.out(c.text))
		}
		d.b.WriteString("</tr>\n")
	}
	d.b.WriteString("</tbody>\n</table></div>\n")
}

func alignClass(a align.Type) string {
	switch a {
	case align.Right:
		return "r"
	case align.Center:
		return "c"
	}
	return "l"
}

// rgb is a props.Color as CSS; only numbers reach the attribute.
func rgb(c *props.Color) string {
	return fmt.Sprintf("#%02x%02x%02x", uint8(c.Red), uint8(c.Green), uint8(c.Blue))
}

func colorAttr(prop string, c *props.Color) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf(" style=\"%s:%s\"", prop, rgb(c))
}

func cellStyle(c tcell) string {
	var parts []string
	if c.bg != nil {
		parts = append(parts, "background:"+rgb(c.bg))
	}
	if c.fg != nil {
		parts = append(parts, "color:"+rgb(c.fg))
	}
	if len(parts) == 0 {
		return ""
	}
	return " style=\"" + strings.Join(parts, ";") + "\""
}

// document wraps the pages: head with the style sheet and a Content-Security-Policy that allows
// no fetch at all and only the one embedded script (by its hash), a navigation bar, the pages.
func (d *htmlDoc) document(title, campaign, version string) []byte {
	script := svgchart.Script
	sum := sha256.Sum256([]byte(script))
	var b strings.Builder
	b.Grow(d.b.Len() + len(pageStyle) + len(svgchart.Style) + len(script) + 2048)
	fmt.Fprintf(&b, `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-%s'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="perfdag%s">
<title>%s</title>
<style>%s%s</style>
</head>
<body>
<header class="top"><span class="brand">perfdag report</span> <span class="camp">%s</span>
<nav>`, base64.StdEncoding.EncodeToString(sum[:]), d.out(version), d.out("perfdag report - "+title), pageStyle, svgchart.Style, d.out(campaign))
	for i, t := range d.titles {
		fmt.Fprintf(&b, `<a href="#page-%d">%s</a>`, i+1, d.out(t))
	}
	fmt.Fprintf(&b, "</nav></header>\n<main data-pages=\"%d\" data-charts=\"%d\">\n", len(d.titles), d.charts)
	b.WriteString(d.b.String())
	fmt.Fprintf(&b, "</main>\n<footer>perfdag report - %s. Hover or focus a chart's mark for its exact value.</footer>\n<script>%s</script>\n</body>\n</html>\n",
		d.out(campaign), script)
	return []byte(b.String())
}
