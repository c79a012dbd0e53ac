package dcgmcorrelate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
	"github.com/perfdag/perfdag/steps/telemetry/dcgm"
)

// CorrelationFile is the record this kind writes in the cell's directory.
const CorrelationFile = "dcgm_correlation.json"

// Point is one measured point as dcgm-correlate sees it: its window and output throughput.
type Point struct {
	Concurrency   int
	Window        dcgm.Window // zero Start/End when the point was not measured
	OutputTokPerS float64     // whole endpoint; 0 when unmeasured
	Measured      bool        // a point.json exists
}

// Points reads the window and output tok/s of each of a cell's concurrencies from
// raw/c<N>/point.json: started_at/ended_at, or — when those are missing — the first start and
// last end of the profiling requests in records.jsonl. A concurrency without point.json is
// returned unmeasured; a malformed file is an error naming the file and field.
func Points(campaignDir string, cell *schema.Cell) ([]Point, error) {
	concs := slices.Clone(cell.Concurrencies)
	slices.Sort(concs)
	concs = slices.Compact(concs)
	out := make([]Point, 0, len(concs))
	for _, c := range concs {
		raw := filepath.Join(atlas.CellDir(campaignDir, cell.ID), "raw", "c"+strconv.Itoa(c))
		pt := Point{Concurrency: c, Window: dcgm.Window{Concurrency: c}}
		path := filepath.Join(raw, "point.json")
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			out = append(out, pt)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		var p schema.Point
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, fmt.Errorf("decode %s: %w", path, err)
		}
		pt.Measured, pt.OutputTokPerS = true, p.OutputTokenThroughput
		if pt.Window.Start, err = parseTime(path, "started_at", p.StartedAt); err != nil {
			return nil, err
		}
		if pt.Window.End, err = parseTime(path, "ended_at", p.EndedAt); err != nil {
			return nil, err
		}
		if pt.Window.Start.IsZero() || pt.Window.End.IsZero() {
			start, end, err := recordsWindow(filepath.Join(raw, "records.jsonl"))
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

// recordsWindow is the first start and last end of the profiling requests of records.jsonl;
// zero times when the file does not exist.
func recordsWindow(path string) (start, end time.Time, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return start, end, nil
	}
	if err != nil {
		return start, end, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	var first, last int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r schema.RequestRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return start, end, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if r.Phase != "profiling" || r.StartNs <= 0 {
			continue
		}
		if first == 0 || r.StartNs < first {
			first = r.StartNs
		}
		last = max(last, r.EndNs, r.LastContentNs)
	}
	if err := sc.Err(); err != nil {
		return start, end, fmt.Errorf("read %s: %w", path, err)
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
	points, err := Points(t.Dir, cell)
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
	tps := map[int]float64{}
	var unmeasured []string
	for _, pt := range points {
		if !pt.Measured {
			res.MissingPointFiles++
			unmeasured = append(unmeasured, "c"+strconv.Itoa(pt.Concurrency))
		}
		if pt.OutputTokPerS > 0 {
			tps[pt.Concurrency] = pt.OutputTokPerS
		}
		// A frozen file needs no window (it may carry its own); the live sources query one.
		if res.Source == SourceFrozen || !pt.Window.Start.IsZero() {
			windows = append(windows, pt.Window)
		}
	}
	if len(unmeasured) > 0 {
		fmt.Fprintf(log, "dcgm-correlate %s: no point.json for %s (not measured yet, or failed before writing)\n", cell.ID, strings.Join(unmeasured, ", "))
	}
	corr, err := dcgm.Correlate(ctx, src, windows, tps, cell.GPUs)
	if err != nil {
		return engine.Result{}, fmt.Errorf("cell %s: %w", cell.ID, err)
	}
	corr.Cell = cell.ID
	b, err := atlas.EncodeJSON(corr)
	if err != nil {
		return engine.Result{}, fmt.Errorf("encode %s: %w", CorrelationFile, err)
	}
	rel := filepath.Join("cells", cell.ID, CorrelationFile)
	if err := os.MkdirAll(filepath.Join(t.Dir, "cells", cell.ID), 0o755); err != nil {
		return engine.Result{}, fmt.Errorf("write %s: %w", rel, err)
	}
	if err := atlas.WriteFileAtomic(filepath.Join(t.Dir, rel), b); err != nil {
		return engine.Result{}, err
	}
	summarize(res, &corr)
	return engine.Result{Value: res, Outputs: []string{rel}, Summary: summaryLine(res, &corr)}, nil
}

// noSource records a cell whose endpoint exports no DCGM (the default pipeline correlates every
// cell once any endpoint does): ungrounded, and no correlation file — a stale one from an
// earlier configuration is removed, so the atlas never joins telemetry that no longer applies.
func noSource(t *engine.Task, res *Result) (engine.Result, error) {
	res.Source, res.SolRigor = "none", schema.RigorL1
	path := filepath.Join(atlas.CellDir(t.Dir, t.Cell.ID), CorrelationFile)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return engine.Result{}, fmt.Errorf("remove stale %s: %w", path, err)
	}
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
	s := fmt.Sprintf("%s from %s: %d/%d points with data", state, res.Source, res.PointsWithData, res.Points)
	if res.PowerWattsPerGPUAvg > 0 {
		s += fmt.Sprintf(", %.0f W/GPU avg", res.PowerWattsPerGPUAvg)
	}
	if res.TokensPerWattMax > 0 {
		s += fmt.Sprintf(", %.3g tok/W max", res.TokensPerWattMax)
	}
	if res.MissingExporterFiles > 0 {
		s += fmt.Sprintf(", %d point(s) without exporter samples", res.MissingExporterFiles)
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
