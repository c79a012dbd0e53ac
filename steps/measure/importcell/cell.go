// Package importcell turns existing benchmark outputs (AIPerf artifact directories, vLLM
// `bench serve --save-result` JSON, SGLang bench_serving JSONL, or a variant A/B bundle of
// them) into campaign cells with an `import:` block, and adds those cells to a campaign
// YAML file without disturbing the rest of it. It is the library behind `perfdag import`:
// every file is read with steps/measure/benchfile (the import kind's reader), so a cell this
// package writes is one the import step accepts, and a file it refuses is refused with the
// same positioned error (file:line: field: message).
package importcell

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/benchfile"
	"github.com/perfdag/perfdag/steps/measure/stats"
	"github.com/perfdag/perfdag/steps/measure/workload"
)

// FormatAuto asks Build to recognise each file's format from its content.
const FormatAuto = "auto"

// Options say how to build an imported cell. Identity fields left empty are not written, so
// the campaign's defaults apply to them.
type Options struct {
	Format        string // aiperf, vllm-bench, sglang-bench or auto ("" = auto)
	Cell          string // cell id; "" derives one from the files
	Endpoint      string // the campaign endpoint the outputs were measured on ("" = the only one)
	SourceVersion string // the tool's version, for files that do not state it
	// BaseDir is the directory paths in the cell are relative to: the campaign file's.
	BaseDir string
	// Identity of what the files measured. Model defaults to the model the files state, and
	// Engine to the one a vLLM or SGLang output implies.
	Identity schema.Identity
}

// Point is one file (or AIPerf directory) read for a cell.
type Point struct {
	Path   string            // as given
	Result *benchfile.Result // its point, without the per-request records (Result.Slim)
}

// Build reads the outputs at paths (one per point: a concurrency, or a request rate) and
// returns the cell that imports them. What the files state is checked against the cell exactly
// as the import step checks it, so a model, load or token-length mismatch is reported now, at
// its position. Closed-loop runs become the cell's concurrencies, request-rate runs its rates,
// their shared max concurrency its max_in_flight and their arrivals its workload's.
func Build(paths []string, o Options) (schema.Cell, []Point, error) {
	if len(paths) == 0 {
		return schema.Cell{}, nil, fmt.Errorf("import: no file given")
	}
	format := o.Format
	if format == "" {
		format = FormatAuto
	}
	if format != FormatAuto && !slices.Contains(benchfile.Formats(), format) {
		return schema.Cell{}, nil, fmt.Errorf("import: format %q: want %s or %s", format, strings.Join(benchfile.Formats(), ", "), FormatAuto)
	}
	if cm := o.Identity.CacheMode; cm != "" && cm != "warm" && cm != "cold" {
		return schema.Cell{}, nil, fmt.Errorf("import: cache mode %q: want warm or cold", cm)
	}
	var (
		points []Point
		seen   = map[schema.Load]string{} // load → the file imported at it
		cellFm string
		files  = benchfile.NewFiles() // a file of many runs is indexed once, each run read when needed
		first  *benchfile.Result      // the lowest load's run: it names the workload
	)
	for _, p := range paths {
		f, ip, err := format, p, error(nil)
		if format == FormatAuto {
			f, ip, err = files.Detect(p)
		} else {
			ip, err = benchfile.Locate(format, p)
		}
		if err != nil {
			return schema.Cell{}, nil, err
		}
		if cellFm != "" && f != cellFm {
			return schema.Cell{}, nil, fmt.Errorf("import: %s is %s output, %s is %s: one cell imports one format (import them as two cells)", points[0].Path, cellFm, p, f)
		}
		cellFm = f
		runs, err := files.Runs(f, ip) // a JSONL of several runs is a sweep: one point each
		if err != nil {
			return schema.Cell{}, nil, err
		}
		if len(runs) < 2 {
			runs = []schema.Load{{}} // one run: read it whatever its load
		}
		for _, l := range runs {
			r, err := files.Read(f, ip, benchfile.Expect{Load: l}, stats.Options{})
			if err != nil {
				return schema.Cell{}, nil, err
			}
			if prev, ok := seen[r.Load]; ok {
				return schema.Cell{}, nil, r.At(r.ConcurrencyField(), fmt.Sprintf("%s is already imported from %s: a cell has one run per point", r.Load.Label(), prev))
			}
			seen[r.Load] = r.File
			if first == nil || r.Load.Compare(first.Load) < 0 {
				first = r
			}
			points = append(points, Point{Path: ip, Result: r.Slim()}) // a run's requests are not kept: memory is one run's, not the file's
		}
	}
	slices.SortFunc(points, func(a, b Point) int { return a.Result.Load.Compare(b.Result.Load) })

	cell := schema.Cell{ID: o.Cell, Endpoint: o.Endpoint, Identity: o.Identity}
	if cell.ID == "" {
		cell.ID = defaultID(paths, cellFm)
	}
	if cell.Model == "" {
		cell.Model = first.Model
	}
	if cell.Engine == "" {
		cell.Engine = engineOf(cellFm)
	}
	isl, osl, err := first.Workload()
	if err != nil {
		return schema.Cell{}, nil, err
	}
	cell.Workload = schema.Workload{Shape: workload.ShapeCustom, InputTokens: int(math.Round(isl)), OutputTokens: int(math.Round(osl))}
	cell.Import = &schema.CellImport{Format: cellFm, SourceVersion: o.SourceVersion}
	if err := ratePoints(&cell, points); err != nil {
		return schema.Cell{}, nil, err
	}
	for _, p := range points {
		l, ip := p.Result.Load, schema.ImportPoint{Path: relTo(o.BaseDir, p.Path)}
		if l.IsRate() {
			cell.Rates, ip.Rate = append(cell.Rates, l.Rate), l.Rate
		} else {
			cell.Concurrencies, ip.Concurrency = append(cell.Concurrencies, l.Concurrency), l.Concurrency
		}
		cell.Import.Points = append(cell.Import.Points, ip)
	}
	if err := check(files, cell, points); err != nil {
		return schema.Cell{}, nil, err
	}
	return cell, points, nil
}

// Check reads every point again with what the cell says it measured: the import step's check.
func Check(cell schema.Cell, points []Point) error { return check(benchfile.NewFiles(), cell, points) }

// check is Check reading through files (Build's, which has every file already).
func check(files *benchfile.Files, cell schema.Cell, points []Point) error {
	b, err := workload.Resolve(cell.Workload)
	if err != nil {
		return fmt.Errorf("cell %s: %w", cell.ID, err)
	}
	for _, p := range points {
		e := benchfile.Expect{Model: cell.Model, Load: p.Result.Load, ISL: b.InputTokens, OSL: b.OutputTokens,
			Arrival: cell.Workload.Arrival, Burstiness: cell.Workload.Burstiness}
		if _, err := files.Read(cell.Import.Format, p.Path, e, stats.Options{}); err != nil {
			return err
		}
	}
	return nil
}

// engineOf is the engine a format implies; "" for AIPerf, which measures any engine.
func engineOf(format string) string {
	switch format {
	case benchfile.SourceVLLM:
		return "vllm"
	case benchfile.SourceSGLang:
		return "sglang"
	}
	return ""
}

var notID = regexp.MustCompile(`[^a-z0-9._-]+`)

// ID makes a cell id out of free text: lower case, [a-z0-9._-], starting with a letter or digit.
func ID(s string) string {
	s = strings.Trim(notID.ReplaceAllString(strings.ToLower(s), "-"), "-._")
	if s == "" {
		return "imported"
	}
	return s
}

// defaultID names a cell after its only file (extension dropped), else after the format.
func defaultID(paths []string, format string) string {
	if len(paths) != 1 {
		return format
	}
	base := filepath.Base(filepath.Clean(paths[0]))
	if base == benchfile.AIPerfAggregate || base == benchfile.AIPerfRecords {
		base = filepath.Base(filepath.Dir(filepath.Clean(paths[0])))
	}
	return ID(strings.TrimSuffix(strings.TrimSuffix(base, ".jsonl"), ".json"))
}

// relTo writes p relative to base (slash-separated), or absolute when it cannot be.
func relTo(base, p string) string {
	ap, err := filepath.Abs(p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	if base == "" {
		base = "."
	}
	ab, err := filepath.Abs(base)
	if err != nil {
		return filepath.ToSlash(ap)
	}
	rel, err := filepath.Rel(ab, ap)
	if err != nil {
		return filepath.ToSlash(ap)
	}
	return filepath.ToSlash(rel)
}

// StatsNotes says where the points' statistics come from, one line per kind, in the order
// met: "c2: per-request stats", "c1, r2.5-cap8: aggregate stats; unknown: ttft_ms p90, osl" — what
// a user learns before the run whether a gate can read.
func StatsNotes(points []Point) []string {
	var order []string
	by := map[string][]schema.Load{}
	for _, p := range points {
		n := p.Result.StatsNote()
		if _, ok := by[n]; !ok {
			order = append(order, n)
		}
		by[n] = append(by[n], p.Result.Load)
	}
	out := make([]string, 0, len(order))
	for _, n := range order {
		cs := by[n]
		list := make([]string, 0, min(len(cs), 6))
		for _, c := range cs[:min(len(cs), 6)] {
			list = append(list, c.Key())
		}
		at := strings.Join(list, ", ")
		if len(cs) > 6 {
			at = fmt.Sprintf("%s … %s (%d points)", cs[0].Key(), cs[len(cs)-1].Key(), len(cs))
		}
		out = append(out, at+": "+n)
	}
	return out
}

// ratePoints sets the cell's max_in_flight and arrival process from its request-rate runs: a
// cell's rates share one cap and one arrival process, so runs that differ in either are
// refused, at the later run, as a cell of their own.
func ratePoints(cell *schema.Cell, points []Point) error {
	var first *benchfile.Result
	for _, p := range points {
		r := p.Result
		if !r.Load.IsRate() {
			continue
		}
		if first == nil {
			first = r
			cell.MaxInFlight = r.Load.Cap
			if r.Arrival != schema.ArrivalPoisson {
				cell.Workload.Arrival, cell.Workload.Burstiness = r.Arrival, r.Burstiness
			}
			continue
		}
		if r.Load.Cap != first.Load.Cap {
			return r.At(r.ConcurrencyField(), fmt.Sprintf("%s, and %s of %s: a cell's rates share one max_in_flight (import the runs of each max concurrency as a cell of their own)",
				r.Load.Label(), first.Load.Label(), first.File))
		}
		if r.Arrival != first.Arrival || r.Burstiness != first.Burstiness {
			return r.At("burstiness", fmt.Sprintf("arrivals %s, and %s at %s of %s: a cell's rates share one arrival process (import them as two cells)",
				benchfile.ArrivalWords(r.Arrival, r.Burstiness), benchfile.ArrivalWords(first.Arrival, first.Burstiness), first.Load.Key(), first.File))
		}
	}
	return nil
}

// PointsText lists a cell's points as `perfdag import` reports them: "concurrencies [1,4]",
// "concurrencies [8], rates [1,2.5] (max_in_flight 8)", "rates [2] (no cap)".
func PointsText(c schema.Cell) string {
	var parts []string
	if len(c.Concurrencies) > 0 || len(c.Rates) == 0 {
		b, _ := json.Marshal(c.Concurrencies)
		parts = append(parts, "concurrencies "+string(b))
	}
	if len(c.Rates) > 0 {
		rs := make([]string, len(c.Rates))
		for i, r := range c.Rates {
			rs[i] = schema.FormatRate(r)
		}
		cap := "no cap"
		if c.MaxInFlight > 0 {
			cap = fmt.Sprintf("max_in_flight %d", c.MaxInFlight)
		}
		parts = append(parts, fmt.Sprintf("rates [%s] (%s)", strings.Join(rs, ","), cap))
	}
	return strings.Join(parts, ", ")
}
