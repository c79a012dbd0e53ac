package report

import (
	"math"
	"strings"

	"github.com/johnfercher/maroto/v2/pkg/components/col"
	"github.com/johnfercher/maroto/v2/pkg/components/image"
	"github.com/johnfercher/maroto/v2/pkg/components/page"
	"github.com/johnfercher/maroto/v2/pkg/components/row"
	"github.com/johnfercher/maroto/v2/pkg/components/text"
	"github.com/johnfercher/maroto/v2/pkg/consts/align"
	"github.com/johnfercher/maroto/v2/pkg/consts/border"
	"github.com/johnfercher/maroto/v2/pkg/consts/extension"
	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"
	"github.com/johnfercher/maroto/v2/pkg/core"
	"github.com/johnfercher/maroto/v2/pkg/props"
	"github.com/phpdave11/gofpdf"
)

// Page geometry in millimetres: A4 portrait with 10 mm margins and a 15 mm bottom margin
// that holds the page-number footer.
const (
	gridSize      = 40
	contentW      = 190.0
	marginTop     = 10.0
	marginSide    = 10.0
	marginBottom  = 15.0
	mmPerPt       = 25.4 / 72
	cellPad       = 1.0
	pageBodyH     = 297 - marginTop - marginBottom // the height maroto fills on a page
	titleH        = 9 + 2.5                        // a page's title band and the gap below it
	bodySize      = 8.5
	tableFontSize = 7.0
)

var (
	colorTitleBand = props.Color{Red: 0x1F, Green: 0x3A, Blue: 0x5F}
	colorWhite     = props.Color{Red: 255, Green: 255, Blue: 255}
	colorHeader    = props.Color{Red: 0xE4, Green: 0xE9, Blue: 0xF0}
	colorGrey      = props.Color{Red: 0xC8, Green: 0xC8, Blue: 0xC8}
	colorBorder    = props.Color{Red: 0xB0, Green: 0xB0, Blue: 0xB0}
	colorMuted     = props.Color{Red: 0x55, Green: 0x55, Blue: 0x55}
	colorWarn      = props.Color{Red: 0x9A, Green: 0x3B, Blue: 0x00}
)

// sink is what the page builders write to, so the PDF and the HTML report are the same pages
// in the same order from one code path: doc writes the PDF, htmlDoc the HTML. Sizes are the
// PDF's (points and millimetres); the HTML maps them onto its own type scale.
type sink interface {
	newPage(title string)
	para(s string, size float64, style fontstyle.Type, clr *props.Color)
	heading(s string)
	images(h float64, figs ...*figure)
	table(cols []tcol, groups []tgroup, rows [][]tcell)
	missing(s string)
	space(h float64)
	keep(h float64)
}

// doc wraps the maroto document: every page starts with a title band, continuation pages
// repeat it with "(continued)", and every string passes the secret redactor on its way in.
type doc struct {
	m       core.Maroto
	measure *gofpdf.Fpdf
	tr      func(string) string
	redact  func(string) string
	title   string
	repeat  []fixedRow // rows re-added after a page break (a table header)
	pages   int        // pages started so far: the PDF must have exactly as many
}

// fixedRow is a row and its height in millimetres, made by newRow.
type fixedRow struct {
	h float64
	r core.Row
}

// newPage starts a page with a title band.
func (d *doc) newPage(title string) {
	d.title, d.repeat = title, nil
	d.startPage(title)
}

// startPage hands maroto a page that begins with the title band.
func (d *doc) startPage(title string) {
	d.pages++
	d.m.AddPages(page.New().Add(d.titleRows(title)...))
}

func (d *doc) titleRows(title string) []core.Row {
	band := newRow(9).r.Add(text.NewCol(gridSize, d.out(title), props.Text{
		Size: 13, Style: fontstyle.Bold, Color: &colorWhite, Top: 1.8, Left: 2.5,
	})).WithStyle(&props.Cell{BackgroundColor: &colorTitleBand})
	return []core.Row{band, newRow(2.5).r}
}

// rowUnit is the step every row height is rounded up to: a power-of-two fraction of a
// millimetre, so the sums of row heights maroto and gofpdf each keep are exact. maroto ends a
// page with a filler row reaching exactly to gofpdf's page-break line; with heights such as
// 4.3398611 mm the cursor's rounding error could leave that filler 1e-14 mm past the line, and
// gofpdf then broke the page early, shifting every later page down by one.
const rowUnit = 1.0 / 256

// newRow is an empty row h millimetres tall, rounded up to rowUnit.
func newRow(h float64) fixedRow {
	h = math.Ceil(h/rowUnit-1e-6) * rowUnit
	return fixedRow{h: h, r: row.New(h)}
}

// fits reports whether h more millimetres fit on the current page.
func (d *doc) fits(h float64) bool { return d.m.FitlnCurrentPage(h + 0.5) }

// add appends a row of known height, continuing on a new titled page when it does not fit.
func (d *doc) add(fr fixedRow) {
	if !d.fits(fr.h) {
		d.startPage(d.title + " (continued)")
		for _, rr := range d.repeat {
			d.m.AddRows(rr.r)
		}
	}
	d.m.AddRows(fr.r)
}

// keep makes sure h millimetres fit before a block that must not be split (a heading and its table).
func (d *doc) keep(h float64) {
	if !d.fits(h) {
		d.startPage(d.title + " (continued)")
	}
}

func (d *doc) space(h float64) { d.add(newRow(h)) }

// out prepares a string for the PDF: secrets redacted, then translated to the core fonts'
// code page once here (the text family is "Arial", which maroto does not re-translate on
// every call — its per-call translator setup dominated the render time).
func (d *doc) out(s string) string { return d.tr(d.redact(s)) }

// lines wraps s (already passed through out) the way maroto does and returns the line count.
func (d *doc) lines(s string, size float64, style fontstyle.Type, width float64) int {
	return max(len(d.wrap(s, size, style, width)), 1)
}

// wrap breaks s (already passed through out) into lines the way maroto does: greedy on spaces.
func (d *doc) wrap(s string, size float64, style fontstyle.Type, width float64) []string {
	st := ""
	if style == fontstyle.Bold {
		st = "B"
	} else if style == fontstyle.Italic {
		st = "I"
	}
	d.measure.SetFont("Arial", st, size)
	var lines []string
	var cur []string
	curW := 0.0
	space := d.measure.GetStringWidth(" ")
	for _, w := range strings.Split(s, " ") {
		if w == "" {
			continue
		}
		ww := d.measure.GetStringWidth(w)
		switch {
		case len(cur) == 0:
			cur, curW = []string{w}, ww
		case curW+space+ww <= width:
			cur, curW = append(cur, w), curW+space+ww
		default:
			lines = append(lines, strings.Join(cur, " "))
			cur, curW = []string{w}, ww
		}
	}
	if len(cur) > 0 {
		lines = append(lines, strings.Join(cur, " "))
	}
	return lines
}

// fitWords breaks any word wider than width (a long cell id, model name or URL) after its
// '-', '/', '_' or '.' characters, or anywhere as a last resort, so maroto never draws a word
// across the column border.
func (d *doc) fitWords(s string, size float64, style fontstyle.Type, width float64) string {
	st := ""
	if style == fontstyle.Bold {
		st = "B"
	}
	d.measure.SetFont("Arial", st, size)
	words := strings.Split(s, " ")
	changed := false
	for i, w := range words {
		if d.measure.GetStringWidth(w) <= width {
			continue
		}
		changed = true
		var parts []string
		cur := ""
		for _, r := range w {
			next := cur + string(r)
			if cur != "" && d.measure.GetStringWidth(next) > width {
				// Prefer the last separator inside cur as the break point.
				if j := strings.LastIndexAny(cur, "-/_."); j > 0 && j < len(cur)-1 {
					parts, cur = append(parts, cur[:j+1]), cur[j+1:]+string(r)
					if d.measure.GetStringWidth(cur) <= width {
						continue
					}
				}
				parts, cur = append(parts, cur), string(r)
				continue
			}
			cur = next
		}
		words[i] = strings.Join(append(parts, cur), " ")
	}
	if !changed {
		return s
	}
	return strings.Join(words, " ")
}

// para adds a wrapped paragraph across the page. A paragraph taller than a page goes in
// page-sized pieces: a row taller than an empty page would run past its foot, and gofpdf's
// page break there would push every later page down by one.
func (d *doc) para(s string, size float64, style fontstyle.Type, clr *props.Color) {
	s = d.out(s)
	width := contentW - 2*cellPad
	lineH := size * mmPerPt * 1.18
	per := max(int((pageBodyH-titleH-1-1.6)/lineH), 1) // lines an empty continuation page holds
	lines := d.wrap(s, size, style, width)
	if len(lines) <= per {
		d.paraRow(s, max(len(lines), 1), size, style, clr)
		return
	}
	// The first piece fills what is left of this page (unless that is under three lines).
	first := per
	for first >= 3 && !d.fits(newRow(float64(first)*lineH+1.6).h) {
		first--
	}
	if first < 3 {
		first = per
	}
	for len(lines) > 0 {
		n := min(first, len(lines))
		first = per
		d.paraRow(strings.Join(lines[:n], " "), n, size, style, clr)
		lines = lines[n:]
	}
}

// paraRow adds s, n lines once wrapped, as one row.
func (d *doc) paraRow(s string, n int, size float64, style fontstyle.Type, clr *props.Color) {
	lineH := size * mmPerPt * 1.18
	fr := newRow(float64(n)*lineH + 1.6)
	fr.r.Add(text.NewCol(gridSize, s, props.Text{
		Size: size, Style: style, Color: clr, Left: cellPad, Right: cellPad, Top: 0.6,
		VerticalPadding: lineH - size*mmPerPt,
	}))
	d.add(fr)
}

// heading adds a section heading.
func (d *doc) heading(s string) {
	fr := newRow(7)
	fr.r.Add(text.NewCol(gridSize, d.out(s), props.Text{Size: 10.5, Style: fontstyle.Bold, Top: 2}))
	d.add(fr)
}

// images adds the figures' PNGs side by side in equal columns, h millimetres tall; a nil
// figure leaves its column empty (the last row of a grid of panels).
func (d *doc) images(h float64, figs ...*figure) {
	fr := newRow(h)
	r := fr.r
	w := gridSize / len(figs)
	for _, f := range figs {
		if f == nil {
			r.Add(col.New(w))
			continue
		}
		r.Add(image.NewFromBytesCol(w, f.png, extension.Png, props.Rect{Center: true, Percent: 100}))
	}
	d.add(fr)
}

// tcol is a table column: header text, width in grid units, alignment.
type tcol struct {
	head  string
	w     int
	align align.Type
}

// tcell is a table cell with optional background and text colour.
type tcell struct {
	text string
	bg   *props.Color
	fg   *props.Color
	bold bool
	// exact is the unrounded value behind a rounded number; the HTML shows it on hover.
	exact *float64
}

// tgroup is a header cell spanning columns above the column headers.
type tgroup struct {
	head string
	w    int
}

func plain(s string) tcell { return tcell{text: s} }

// table adds a table whose header rows repeat after a page break; cell heights follow the
// longest wrapped text of the row.
func (d *doc) table(cols []tcol, groups []tgroup, rows [][]tcell) {
	fs := tableFontSize
	var header []fixedRow
	if len(groups) > 0 {
		var gcells []tcell
		var gcols []tcol
		for _, g := range groups {
			gcells = append(gcells, tcell{text: g.head, bg: &colorHeader, bold: true})
			gcols = append(gcols, tcol{w: g.w, align: align.Center})
		}
		header = append(header, d.tableRow(gcols, gcells, fs))
	}
	hcells := make([]tcell, len(cols))
	for i, c := range cols {
		hcells[i] = tcell{text: c.head, bg: &colorHeader, bold: true}
	}
	header = append(header, d.tableRow(cols, hcells, fs))
	total := 0.0
	for _, h := range header {
		total += h.h
	}
	first := 0.0
	if len(rows) > 0 {
		first = d.tableRow(cols, rows[0], fs).h
	}
	d.keep(total + first)
	for _, h := range header {
		d.add(h)
	}
	d.repeat = header
	for _, r := range rows {
		fr := d.tableRow(cols, r, fs)
		d.add(fr)
	}
	d.repeat = nil
}

func (d *doc) tableRow(cols []tcol, cells []tcell, fs float64) fixedRow {
	lineH := fs * mmPerPt * 1.15
	n := 1
	txt := make([]string, len(cells))
	for i, c := range cells {
		style := fontstyle.Normal
		if c.bold {
			style = fontstyle.Bold
		}
		w := float64(cols[i].w)/gridSize*contentW - 2*cellPad
		txt[i] = d.fitWords(d.out(c.text), fs, style, w)
		n = max(n, d.lines(txt[i], fs, style, w))
	}
	fr := newRow(float64(n)*lineH + 1.5)
	for i, c := range cells {
		style := fontstyle.Normal
		if c.bold {
			style = fontstyle.Bold
		}
		al := cols[i].align
		if al == "" {
			al = align.Left
		}
		cl := col.New(cols[i].w).Add(text.New(txt[i], props.Text{
			Size: fs, Style: style, Align: al, Color: c.fg, Left: cellPad, Right: cellPad, Top: 0.55,
			VerticalPadding: lineH - fs*mmPerPt,
		}))
		st := &props.Cell{BorderType: border.Full, BorderColor: &colorBorder, BorderThickness: 0.1}
		if c.bg != nil {
			st.BackgroundColor = c.bg
		}
		fr.r.Add(cl.WithStyle(st))
	}
	return fr
}

// missing writes the one line a page shows when its data is absent.
func (d *doc) missing(s string) {
	d.para(s, 10, fontstyle.Italic, &colorMuted)
}
