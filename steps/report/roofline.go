package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"github.com/johnfercher/maroto/v2/pkg/consts/align"
	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"
	"gonum.org/v1/plot/vg"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report/charts"
)

const (
	roofAH     = 92.0
	roofBH     = 70.0
	hbmTarget  = 75.0
	ceilingPad = 2.0
)

func hasRoofline(sweeps []schema.RooflineSweep) bool {
	for _, s := range sweeps {
		if len(s.Rows) > 0 {
			return true
		}
	}
	return false
}

// sweepLabel names a sweep: hardware, TP, quant, KV dtype and engine (import id when needed).
func sweepLabel(s schema.RooflineSweep, all []schema.RooflineSweep) string {
	parts := []string{s.Hardware, tpPart(s.TensorParallel), s.Quant}
	if kv := s.Provenance.KVCacheDtype; kv != "" {
		parts = append(parts, "KV "+kv)
	}
	if e := s.Provenance.Engine; e != "" {
		parts = append(parts, e)
	}
	label := strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
	n := 0
	for _, o := range all {
		if o.Hardware == s.Hardware && o.TensorParallel == s.TensorParallel && o.Quant == s.Quant &&
			o.Provenance.KVCacheDtype == s.Provenance.KVCacheDtype && o.Provenance.Engine == s.Provenance.Engine {
			n++
		}
	}
	if n > 1 {
		label += " [" + s.ImportID + "]"
	}
	return label
}

func rooflineCharts(v *view, art *artwork) []job {
	sweeps := v.in.Roofline
	if !hasRoofline(sweeps) {
		return nil
	}
	return []job{
		func() error {
			f, err := art.chartFig(panelA(sweeps))
			if err != nil {
				return fmt.Errorf("roofline panel A: %w", err)
			}
			art.roofA = f
			return nil
		},
		func() error {
			f, err := art.barFig(panelB(sweeps))
			if err != nil {
				return fmt.Errorf("roofline panel B: %w", err)
			}
			art.roofB = f
			return nil
		},
	}
}

// panelA plots arithmetic intensity against achieved FLOP/s per GPU, log-log, under each
// hardware's compute ceiling and HBM diagonal (y = HBM TB/s x AI gives TFLOP/s).
func panelA(sweeps []schema.RooflineSweep) charts.Chart {
	var series []charts.Series
	xlo, xhi, ylo, yhi := math.Inf(1), 0.0, math.Inf(1), 0.0
	type ceiling struct{ peak, bw float64 }
	ceilings := map[string]ceiling{}
	var ceilNames []string
	for i, s := range sweeps {
		label := sweepLabel(s, sweeps)
		for _, phase := range []string{schema.RooflinePhaseDecode, schema.RooflinePhasePrefill} {
			ser := charts.Series{Name: label + " " + phase, Color: charts.Color(i), Marker: charts.Circle, Line: true, Width: 0.6}
			if phase == schema.RooflinePhasePrefill {
				ser.Marker, ser.Dashed = charts.Square, true
			}
			for _, r := range s.Rows {
				if r.Phase != phase || r.AchievedTFLOPsPerGPU == nil || r.ArithmeticIntensity <= 0 || *r.AchievedTFLOPsPerGPU <= 0 {
					continue
				}
				pt := charts.Point{X: r.ArithmeticIntensity, Y: *r.AchievedTFLOPsPerGPU, Label: fmt.Sprintf("c%d", r.Concurrency)}
				if phase == schema.RooflinePhasePrefill {
					pt.Label = fmt.Sprintf("isl %d", r.ISL)
				}
				ser.Points = append(ser.Points, pt)
				xlo, xhi = math.Min(xlo, pt.X), math.Max(xhi, pt.X)
				ylo, yhi = math.Min(ylo, pt.Y), math.Max(yhi, pt.Y)
				key := fmt.Sprintf("%s %s", r.Hardware, r.Quant)
				if _, ok := ceilings[key]; !ok && r.PeakTFLOPsPerGPU > 0 && r.PeakHBMTBs > 0 {
					ceilings[key] = ceiling{r.PeakTFLOPsPerGPU, r.PeakHBMTBs}
					ceilNames = append(ceilNames, key)
				}
			}
			if len(ser.Points) > 0 {
				series = append(series, ser)
			}
		}
	}
	for _, c := range ceilings {
		ridge := c.peak / c.bw
		xlo, xhi = math.Min(xlo, ridge), math.Max(xhi, ridge)
		yhi = math.Max(yhi, c.peak)
	}
	xlo, xhi = xlo/ceilingPad, xhi*ceilingPad
	ylo, yhi = ylo/ceilingPad, yhi*1.3
	slices.Sort(ceilNames)
	for i, name := range ceilNames {
		c := ceilings[name]
		ridge := c.peak / c.bw
		grey := color.RGBA{uint8(40 + 50*i), uint8(40 + 50*i), uint8(40 + 50*i), 0xFF}
		series = append(series,
			charts.Series{Name: fmt.Sprintf("%s HBM ceiling %.1f TB/s", name, c.bw), Color: grey, Marker: charts.None, Line: true, Dashed: true, Width: 1.1,
				Points: []charts.Point{{X: xlo, Y: c.bw * xlo}, {X: ridge, Y: c.peak}}},
			charts.Series{Name: fmt.Sprintf("%s compute ceiling %s TFLOP/s", name, fnum(c.peak)), Color: grey, Marker: charts.None, Line: true, Width: 1.1,
				Points: []charts.Point{{X: ridge, Y: c.peak}, {X: xhi, Y: c.peak}}})
	}
	return charts.Chart{
		Title:  "Panel A: achieved FLOP/s per GPU vs arithmetic intensity (log-log)",
		X:      charts.Axis{Label: "analytical arithmetic intensity (FLOP/byte)", Log: true, Min: xlo, Max: xhi},
		Y:      charts.Axis{Label: "achieved TFLOP/s per GPU", Log: true, Min: math.Max(ylo, 1e-6), Max: yhi},
		Series: series, Legend: true,
		Width: vg.Length(contentW) * vg.Millimeter, Height: vg.Length(roofAH) * vg.Millimeter, FontSize: 7,
		Empty: "no point with an achieved FLOP/s",
	}
}

// panelB shows, per decode point, the DRAM_ACTIVE duty-cycle proxy and the byte-grounded
// delivered HBM bandwidth side by side (never merged) against the 75 % line.
func panelB(sweeps []schema.RooflineSweep) charts.BarChart {
	var cats []string
	var dram, hbm []float64
	for i, s := range sweeps {
		for _, r := range s.Rows {
			if r.Phase != schema.RooflinePhaseDecode {
				continue
			}
			cat := fmt.Sprintf("c%d", r.Concurrency)
			if len(sweeps) > 1 {
				cat = fmt.Sprintf("S%d c%d", i+1, r.Concurrency)
			}
			cats = append(cats, cat)
			dram = append(dram, orNaN(r.DRAMActivePct))
			hbm = append(hbm, orNaN(r.HBMBWDeliveredPct))
		}
	}
	ymax := 100.0
	for _, x := range append(slices.Clone(dram), hbm...) {
		if !math.IsNaN(x) {
			ymax = math.Max(ymax, x*1.1)
		}
	}
	dl, hl := schema.DRAMActiveLabel, schema.HBMBytesLabel
	if len(sweeps) > 0 {
		dl, hl = first(sweeps[0].DRAMLabel, dl), first(sweeps[0].HBMLabel, hl)
	}
	return charts.BarChart{
		Title:      "Panel B: decode HBM utilisation per point",
		YLabel:     "% of peak HBM",
		XLabel:     "decode concurrency",
		Categories: cats,
		Groups: []charts.BarGroup{
			{Name: dl, Color: charts.Color(5), Values: dram},
			{Name: hl, Color: charts.Color(0), Values: hbm},
		},
		Refs:  []charts.RefLine{{Name: "75 % of peak HBM bandwidth", Y: hbmTarget, Color: color.RGBA{0xB0, 0x1C, 0x1C, 0xFF}}},
		YMax:  ymax,
		Width: vg.Length(contentW) * vg.Millimeter, Height: vg.Length(roofBH) * vg.Millimeter, FontSize: 7,
	}
}

func orNaN(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

// rooflinePage is page 7: panels A and B, then each sweep's provenance and points.
func rooflinePage(d sink, v *view, art *artwork) {
	d.newPage(TitleRoofline)
	sweeps := v.in.Roofline
	if !hasRoofline(sweeps) {
		d.missing("No roofline sweep in this campaign.")
		return
	}
	d.para("Panel A: a decode point's vertical gap below the HBM diagonal is its HBM utilisation; points right of the ridge are compute-bound. Panel B keeps the DCGM DRAM_ACTIVE duty-cycle proxy and the byte-grounded delivered bandwidth apart; decode should approach the 75 % line.",
		7.5, fontstyle.Normal, &colorMuted)
	d.images(roofAH, art.roofA)
	d.images(roofBH, art.roofB)
	cols := []tcol{
		{head: "Phase", w: 3}, {head: "C", w: 2, align: align.Right}, {head: "ISL", w: 3, align: align.Right},
		{head: "AI (FLOP/B)", w: 4, align: align.Right}, {head: "Ridge", w: 3, align: align.Right}, {head: "Bound", w: 3},
		{head: "TFLOP/s/GPU", w: 4, align: align.Right}, {head: "Compute %", w: 3, align: align.Right},
		{head: "HBM delivered %", w: 4, align: align.Right}, {head: "DRAM active %", w: 4, align: align.Right},
		{head: "SM active", w: 3, align: align.Right}, {head: "Tensor active", w: 4, align: align.Right},
	}
	for i, s := range sweeps {
		p := s.Provenance
		d.keep(20)
		d.heading(fmt.Sprintf("S%d %s", i+1, sweepLabel(s, sweeps)))
		d.para(fmt.Sprintf("Model %s (%s); engine %s %s, commit %s, delivery %s; cache %s; captured %s; weights %s B/param, KV %s B/elem.",
			first(p.Model, s.Model.Source), first(s.Model.Attention, "?"), first(p.Engine, "?"), first(p.EngineVersion, "?"),
			first(p.Commit, "not recorded"), first(p.Delivery, "not recorded"), first(s.CacheMode, "undeclared"), first(p.CaptureDate, "?"),
			stated(s.WeightBytes), stated(s.KVBytes)), 7.5, fontstyle.Normal, nil)
		var rows [][]tcell
		for _, r := range s.Rows {
			isl := "-"
			if r.ISL > 0 {
				isl = fmt.Sprint(r.ISL)
			}
			rows = append(rows, []tcell{plain(r.Phase), plain(fmt.Sprint(r.Concurrency)), plain(isl),
				plain(fnum(r.ArithmeticIntensity)), plain(fnum(r.RidgeFLOPPerByte)), plain(r.Bound),
				plain(num(r.AchievedTFLOPsPerGPU)), plain(pctOf(r.ComputePct)), plain(pctOf(r.HBMBWDeliveredPct)),
				plain(pctOf(r.DRAMActivePct)), plain(pct(r.SMActive)), plain(pct(r.TensorActive))})
		}
		d.table(cols, nil, rows)
		for _, w := range s.Warnings {
			d.para("Warning: "+w, 7, fontstyle.Italic, &colorWarn)
		}
		d.space(2)
	}
}
