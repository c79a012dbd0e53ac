package svgchart

import (
	"html/template"
	"image/color"
)

// legendItem is one entry of a legend: a swatch (line and/or marker) and a name.
type legendItem struct {
	name               string
	color              color.Color
	marker             Marker
	hollow, line, dash bool
	span               bool // a shaded band's swatch
}

// charW approximates the width of one character of legend text (11 px sans-serif).
const charW = 6.2

func (it legendItem) width() float64 { return 30 + charW*float64(len([]rune(it.name))) + 14 }

// legendRows packs items left to right into rows no wider than w.
func legendRows(items []legendItem, w float64) [][]legendItem {
	var rows [][]legendItem
	cur, used := []legendItem(nil), 0.0
	for _, it := range items {
		if len(cur) > 0 && used+it.width() > w {
			rows, cur, used = append(rows, cur), nil, 0
		}
		cur, used = append(cur, it), used+it.width()
	}
	if len(cur) > 0 {
		rows = append(rows, cur)
	}
	return rows
}

// legend draws the rows from y downwards.
func (c *canvas) legend(rows [][]legendItem, y float64) {
	for ri, row := range rows {
		x, cy := 12.0, y+float64(ri)*legendRow+legendRow/2
		for _, it := range row {
			col := hex(it.color)
			c.printf(`<g class="key">`)
			if it.span {
				c.printf(`<rect class="span" x="%.1f" y="%.1f" width="22" height="9" fill="%s" fill-opacity="%s"/>`, x, cy-4.5, col, spanOpacity)
			}
			if it.line {
				dash := ""
				if it.dash {
					dash = ` stroke-dasharray="4 2"`
				}
				c.printf(`<line class="line" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"%s/>`, x, cy, x+22, cy, col, dash)
			}
			if it.marker != None {
				c.glyph(it.marker, x+11, cy, col, it.hollow)
			}
			c.text(x+28, cy+4, "start", "keytext", it.name)
			c.b.WriteString(`</g>`)
			x += it.width()
		}
	}
}

// Legend is a stand-alone legend strip (one legend shared by several panes) w pixels wide.
func Legend(series []Series, w int) template.HTML {
	var items []legendItem
	for _, s := range series {
		if s.NoLegend {
			continue
		}
		items = append(items, legendItem{s.Name, s.Color, s.Marker, s.Hollow, s.Line, s.Dashed, false})
	}
	if w <= 0 {
		w = 900
	}
	rows := legendRows(items, float64(w)-20)
	h := int(float64(len(rows))*legendRow + 6)
	c := &canvas{w: w, h: h}
	c.printf(`<svg xmlns="http://www.w3.org/2000/svg" class="svglegend" viewBox="0 0 %d %d" width="%d" height="%d">`, w, h, w, h)
	c.legend(rows, 2)
	return c.done()
}
