package charts

import (
	"image/color"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// legendEntry is one named series as the legend shows it.
type legendEntry struct {
	name string
	s    Series
}

func legendEntries(series []Series) []legendEntry {
	var out []legendEntry
	for _, s := range series {
		if s.Name == "" || s.NoLegend {
			continue
		}
		out = append(out, legendEntry{name: s.Name, s: s})
	}
	return out
}

// legendLayout holds where each entry goes: entries flow left to right and wrap into rows.
type legendLayout struct {
	pos      []vg.Point // bottom-left of each entry's swatch, relative to the area's top-left
	height   vg.Length
	rowH     vg.Length
	swatchW  vg.Length
	textGapW vg.Length
}

func layoutLegend(entries []legendEntry, width, fs vg.Length) legendLayout {
	sty := textStyle(fs, color.Black)
	lay := legendLayout{rowH: sty.Height("Mg") + 3, swatchW: 14, textGapW: 3}
	const pad, entryGap = vg.Length(4), vg.Length(10)
	x, row := pad, 0
	for _, e := range entries {
		w := lay.swatchW + lay.textGapW + sty.Width(e.name)
		if x > pad && x+w > width-pad {
			x, row = pad, row+1
		}
		lay.pos = append(lay.pos, vg.Point{X: x, Y: vg.Length(row+1) * lay.rowH})
		x += w + entryGap
	}
	if len(entries) > 0 {
		lay.height = vg.Length(row+1)*lay.rowH + pad
	}
	return lay
}

func drawLegend(area draw.Canvas, entries []legendEntry, lay legendLayout, fs vg.Length) {
	top := area.Max.Y
	for i, e := range entries {
		p := lay.pos[i]
		baseY := top - p.Y + 1
		midY := baseY + (lay.rowH-3)/2 - 1
		x0 := area.Min.X + p.X
		if e.s.Line || e.s.Marker == None {
			ls := lineStyle(e.s)
			area.StrokeLine2(ls, x0, midY, x0+lay.swatchW, midY)
		}
		if g := glyph(e.s.Marker, e.s.Hollow); g != nil {
			area.DrawGlyphNoClip(draw.GlyphStyle{Color: e.s.Color, Radius: markerRadius, Shape: g},
				vg.Point{X: x0 + lay.swatchW/2, Y: midY})
		}
		area.FillText(textStyle(fs, color.Black), vg.Point{X: x0 + lay.swatchW + lay.textGapW, Y: baseY}, e.name)
	}
}

// LegendStrip renders a stand-alone legend naming every series, wrapped to width; its height
// follows from the number of rows. A page of small multiples shares one strip.
func LegendStrip(series []Series, width, fontSize vg.Length) ([]byte, vg.Length, error) {
	if fontSize == 0 {
		fontSize = 7
	}
	entries := legendEntries(series)
	lay := layoutLegend(entries, width, fontSize)
	h := lay.height
	if h == 0 {
		h = lay.rowH
	}
	c := newCanvas(width, h)
	drawLegend(draw.New(c), entries, lay, fontSize)
	b, err := encodePNG(c)
	return b, h, err
}
