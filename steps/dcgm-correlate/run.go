package dcgmcorrelate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/telemetry/dcgm"
)

// Point is one measured point as dcgm-correlate sees it: its window and output throughput.
type Point struct {
	Load          schema.Load
	Window        dcgm.Window // zero Start/End when the point was not measured
	OutputTokPerS float64     // whole endpoint; 0 when unmeasured
	Measured      bool        // its measurement's result names a point file
	Files         campaigndir.PointFiles
}

// Points reads the window and output tok/s of each of a cell's points (listed, or probed by a
// search) from the points its upstream measurements name: started_at/ended_at of the point
// file, or — when those are missing — the first start and last end of the profiling requests
// of its records. A point no upstream measured is returned unmeasured; a malformed file is an
// error naming the file and field. Points come in key order (schema.Load.Compare).
func Points(r campaigndir.Reader, cell *schema.Cell, upstream []engine.Upstream) ([]Point, error) {
	measured := map[schema.Load]campaigndir.PointFiles{}
	for _, u := range upstream {
		if po, ok := u.Result.(campaigndir.PointOutput); ok && po.PointFiles().Cell == cell.ID {
			measured[upstreamLoad(u, po.PointFiles())] = po.PointFiles()
		}
	}
	loads := cell.Loads()
	for l := range measured {
		loads = append(loads, l) // a searched cell lists none: its probes are its points
	}
	slices.SortFunc(loads, schema.Load.Compare)
	loads = slices.Compact(loads)
	out := make([]Point, 0, len(loads))
	for _, l := range loads {
		pt := Point{Load: l, Window: dcgm.Window{Load: l}}
		files, ok := measured[l]
		if !ok || files.Point == "" {
			out = append(out, pt)
			continue
		}
		var p schema.Point
		if err := r.JSON(files.Point, &p); err != nil {
			return nil, err
		}
		path := files.Point
		pt.Measured, pt.OutputTokPerS, pt.Files = true, p.OutputTokenThroughput, files
		var err error
		if pt.Window.Start, err = parseTime(path, "started_at", p.StartedAt); err != nil {
			return nil, err
		}
		if pt.Window.End, err = parseTime(path, "ended_at", p.EndedAt); err != nil {
			return nil, err
		}
		if (pt.Window.Start.IsZero() || pt.Window.End.IsZero()) && files.Records != "" {
			start, end, err := recordsWindow(r, files.Records)
			if err != nil {
				return nil, err
			}
			pt.Window.Start, pt.Window.End = start, end
		}
		if !pt.Window.Start.IsZero() && pt.Window.End.Before(pt.Window.Start) {
			return nil, fmt.Errorf("%s: field ended_at: %s is before started_at %s", path, p.EndedAt, p.StartedAt)
		}
		out = append(out, pt)
	}
	return out, nil
}

// upstreamLoad is the point a measurement's files belong to: the node's load as the engine
// gives it (a record written before points were keyed by load names only its concurrency).
func upstreamLoad(u engine.Upstream, f campaigndir.PointFiles) schema.Load {
	if !u.Load.IsZero() {
		return u.Load
	}
	return schema.LoadOf(f.Load, f.Concurrency, 0)
}

func parseTime(path, field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: field %s: %q is not an RFC 3339 time", path, field, v)
	}
	return t, nil
}

// recordsWindow is the first start and last end of the profiling requests of a records file.
func recordsWindow(r campaigndir.Reader, rel string) (start, end time.Time, err error) {
	b, err := r.Bytes(rel)
	if err != nil {
		return start, end, err
	}
	var first, last int64
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var rec schema.RequestRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return start, end, fmt.Errorf("%s:%d: %w", rel, line, err)
		}
		if rec.Phase != "profiling" || rec.StartNs <= 0 {
			continue
		}
		if first == 0 || rec.StartNs < first {
			first = rec.StartNs
		}
		last = max(last, rec.EndNs, rec.LastContentNs)
	}
	if err := sc.Err(); err != nil {
		return start, end, fmt.Errorf("read %s: %w", rel, err)
	}
	if first > 0 && last >= first {
		start, end = time.Unix(0, first).UTC(), time.Unix(0, last).UTC()
	}
	return start, end, nil
}

func run(ctx context.Context, t *engine.Task) (engine.Result, error) {
	p, _ := t.Params.(*Params)
	if p == nil {
		p = &Params{}
	}
	log := t.Log
	if log == nil {
		log = io.Discard
	}
	cell := t.Cell
	points, err := Points(t.Files, cell, t.Upstream)
	if err != nil {
		return engine.Result{}, fmt.Errorf("cell %s: %w", cell.ID, err)
	}
	res := &Result{Source: defaultSource(p, t.Endpoint)}
	if res.Source == "" {
		return noSource(t, res)
	}
	src, err := openSource(ctx, t, p, res.Source, points, res, log)
	if err != nil {
		return engine.Result{}, fmt.Errorf("cell %s: %w", cell.ID, err)
	}
	var windows []dcgm.Window
	tps := map[schema.Load]float64{}
	var unmeasured []string
	for _, pt := range points {
		if !pt.Measured {
			res.MissingPointFiles++
			unmeasured = append(unmeasured, pt.Load.Key())
		}
		if pt.OutputTokPerS > 0 {
			tps[pt.Load] = pt.OutputTokPerS
		}
		// A frozen file needs no window (it may carry its own); the live sources query one.
		if res.Source == SourceFrozen || !pt.Window.Start.IsZero() {
			windows = append(windows, pt.Window)
		}
	}
	if len(unmeasured) > 0 {
		fmt.Fprintf(log, "dcgm-correlate %s: no measured point for %s (not measured, or failed before writing)\n", cell.ID, strings.Join(unmeasured, ", "))
	}
	corr, err := dcgm.Correlate(ctx, src, windows, tps, cell.GPUs)
	if err != nil {
		return engine.Result{}, fmt.Errorf("cell %s: %w", cell.ID, err)
	}
	corr.Cell = cell.ID
	rel, err := campaigndir.WriteJSON(t.Dir, campaigndir.DCGMCorrelation(cell.ID), corr)
	if err != nil {
		return engine.Result{}, err
	}
	res.Cell, res.Correlation = cell.ID, rel
	summarize(res, &corr)
	return engine.Result{Value: res, Outputs: []string{rel}, Summary: summaryLine(res, &corr)}, nil
}

// noSource records a cell whose endpoint exports no DCGM (the default pipeline correlates every
// cell once any endpoint does): ungrounded, and no correlation file named, so the atlas never
// joins telemetry an earlier configuration left behind.
func noSource(t *engine.Task, res *Result) (engine.Result, error) {
	res.Source, res.SolRigor = "none", schema.RigorL1
	return engine.Result{Value: res, Summary: fmt.Sprintf("not grounded (L1): endpoint %q has no dcgm_url and no source is configured", t.Cell.Endpoint)}, nil
}

// summarize fills the result's rollups from the correlation record.
func summarize(res *Result, corr *schema.DCGMCorrelation) {
	res.DCGMGrounded, res.SolRigor, res.Points = corr.DCGMGrounded, corr.SolRigor, len(corr.Points)
	var power, dram, sm mean
	for _, p := range corr.Points {
		if p.SMActive != nil || p.DRAMActive != nil || p.PowerWattsPerGPU != nil || p.TensorActive != nil ||
			p.NVLinkBytesPerS != nil || p.PCIeBytesPerS != nil || p.GREngineActive != nil || p.SMOccupancy != nil {
			res.PointsWithData++
		}
		if p.TokensPerWatt != nil {
			res.TokensPerWattMax = max(res.TokensPerWattMax, *p.TokensPerWatt)
		}
		power.add(p.PowerWattsPerGPU)
		dram.add(p.DRAMActive)
		sm.add(p.SMActive)
	}
	res.PowerWattsPerGPUAvg, res.DRAMActiveAvg, res.SMActiveAvg = power.value(), dram.value(), sm.value()
}

func summaryLine(res *Result, corr *schema.DCGMCorrelation) string {
	state := "not grounded (" + corr.SolRigor + ")"
	if corr.DCGMGrounded {
		state = "DCGM-grounded (" + corr.SolRigor + ")"
	}
	s := fmt.Sprintf("%s from %s: %d of %s with data", state, res.Source, res.PointsWithData, plural.N(res.Points, "point"))
	if res.PowerWattsPerGPUAvg > 0 {
		s += fmt.Sprintf(", %.0f W/GPU avg", res.PowerWattsPerGPUAvg)
	}
	if res.TokensPerWattMax > 0 {
		s += fmt.Sprintf(", %.3g tok/W max", res.TokensPerWattMax)
	}
	if res.MissingExporterFiles > 0 {
		s += fmt.Sprintf(", %s without exporter samples", plural.N(res.MissingExporterFiles, "point"))
	}
	return s
}

// mean averages the non-nil values it is given.
type mean struct {
	sum float64
	n   int
}

func (m *mean) add(v *float64) {
	if v != nil {
		m.sum += *v
		m.n++
	}
}

func (m *mean) value() float64 {
	if m.n == 0 {
		return 0
	}
	return m.sum / float64(m.n)
}
