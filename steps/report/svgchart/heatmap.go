package svgchart

import (
	"fmt"
	"html/template"
	"math"
)

// Heatmap shades a grid of values (rows × columns) from light to dark blue, darker = better;
// NaN cells are grey. Each cell shows its value and carries it exactly in its tooltip.
type Heatmap struct {
	Title      string
	Rows, Cols []string
	Values     [][]float64 // [row][col]
	// Higher says larger values are better (darker); otherwise smaller values are darker.
	Higher bool
	Width  int
}

// Shade maps t in [0, 1] onto the heatmap's light-to-dark blue and the text colour readable on it.
func Shade(t float64) (bg, fg string) {
	t = math.Max(0, math.Min(1, t))
	lo, hi := [3]float64{0xEE, 0xF4, 0xFB}, [3]float64{0x08, 0x30, 0x6B}
	var rgb [3]int
	for i := range rgb {
		rgb[i] = int(math.Round(lo[i] + (hi[i]-lo[i])*t))
	}
	fg = "#111"
	if t > 0.55 {
		fg = "#fff"
	}
	return fmt.Sprintf("#%02x%02x%02x", rgb[0], rgb[1], rgb[2]), fg
}

// SVG renders the grid: a label column, a header row, one shaded cell per value.
func (ch Heatmap) SVG() template.HTML {
	w := ch.Width
	if w <= 0 {
		w = 700
	}
	labelW := 40.0
	for _, r := range ch.Rows {
		labelW = math.Max(labelW, charW*float64(len([]rune(r)))+12)
	}
	labelW = math.Min(labelW, float64(w)*0.45)
	const cellH, headH = 24.0, 22.0
	cellW := (float64(w) - labelW - 4) / float64(max(len(ch.Cols), 1))
	h := int(padTop + headH + cellH*float64(len(ch.Rows)) + 6)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range ch.Values {
		for _, v := range row {
			if finite(v, false) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	c := newCanvas("heatmap", ch.Title, w, h)
	for j, col := range ch.Cols {
		c.text(labelW+cellW*(float64(j)+0.5), padTop+headH-7, "middle", "tick", col)
	}
	for i, row := range ch.Rows {
		y := padTop + headH + cellH*float64(i)
		c.text(labelW-6, y+cellH/2+4, "end", "tick", row)
		for j, col := range ch.Cols {
			v := math.NaN()
			if i < len(ch.Values) && j < len(ch.Values[i]) {
				v = ch.Values[i][j]
			}
			x := labelW + cellW*float64(j)
			if !finite(v, false) {
				c.printf(`<rect class="cell gap" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#c8c8c8"/>`, x, y, cellW-1, cellH-1)
				c.text(x+cellW/2, y+cellH/2+4, "middle", "cellna", "–")
				continue
			}
			t := 0.5
			if hi > lo {
				t = (v - lo) / (hi - lo)
			}
			if !ch.Higher {
				t = 1 - t
			}
			bg, fg := Shade(t)
			tip := row + "\n" + col + ": " + Exact(v)
			c.printf(`<g %s><title>%s</title><rect class="cell" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`,
				tipAttrs(tip, [2]string{"row", row}, [2]string{"col", col}, [2]string{"y", Exact(v)}), esc(tip), x, y, cellW-1, cellH-1, bg)
			c.printf(`<text x="%.1f" y="%.1f" text-anchor="middle" class="cellv" fill="%s">%s</text></g>`, x+cellW/2, y+cellH/2+4, fg, esc(Short(v)))
		}
	}
	return c.done()
}
